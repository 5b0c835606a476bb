//! Reading Claude Code's JSON config files as documents mcpenv can edit:
//! only regular files, every error naming its file (with line and column
//! for syntax), an empty file refused for an edit, a project file's size
//! capped as Claude Code caps it.

use std::io::{self, Read};
use std::path::Path;
use std::time::SystemTime;

use crate::config::error::ConfigError;
use crate::config::locate::{Locations, MAX_PROJECT_FILE_BYTES};
use crate::mechanics::document::{DocumentError, JsonDocument};
use crate::mechanics::fsx::{self, Reads};
use crate::mechanics::layout_cache::{self, Captured, Fingerprint, Verified};

mod parts;
pub mod sparse;

/// The root members of `~/.claude.json` worth reading in the first pass:
/// `projects` holds the local scope, and is most of the file.
pub const CLAUDE_JSON_EXPAND: &[&str] = &["projects"];

/// The layout cache a reading of `~/.claude.json` uses (see
/// [`crate::mechanics::layout_cache`]).
#[derive(Debug, Clone, Copy)]
pub struct Cached<'a> {
    /// The cache's file.
    pub file: &'a Path,
    /// Whether a text not found there is added (not a preview's text).
    pub keep: bool,
}

impl<'a> Cached<'a> {
    /// The cache of `locations` for a reading of `path` through `reads`,
    /// if one is used.
    pub fn of(locations: &'a Locations, reads: &dyn Reads, path: &Path) -> Option<Self> {
        locations.layout_cache.as_ref().map(|setting| Self {
            file: &setting.file,
            keep: setting.write && reads.keeps_caches(path),
        })
    }
}

/// What the readers of `~/.claude.json` (`list`, `get`, `check`, `env`, …)
/// take from it: its root `mcpServers` and this project's entry
/// (`projects` / [`Locations::local_key`]), nothing else.
#[derive(Debug)]
pub struct ClaudeJson {
    document: JsonDocument,
    partial: bool,
}

impl ClaudeJson {
    /// Whether the file held nothing but whitespace.
    pub fn is_empty(&self) -> bool {
        self.document.is_empty()
    }

    /// The document to look up the root `mcpServers` and this project's
    /// entry under `projects` in (and what they hold), and nothing else:
    /// when the file's fingerprint was trusted, only those two members were
    /// read, byte for byte, and the document holds them alone (its other
    /// members are absent, not read).
    pub fn lookups(&self) -> &JsonDocument {
        &self.document
    }

    /// Whether only those two members were read (the file's fingerprint
    /// was trusted), not the whole file.
    pub fn is_partial(&self) -> bool {
        self.partial
    }
}

/// Reads and parses `~/.claude.json` (as [`load_document_from`], with
/// [`CLAUDE_JSON_EXPAND`]), for the lookups of [`ClaudeJson`]. With the
/// layout cache, a file whose metadata shows it unchanged since its bytes
/// were verified ([`layout_cache::Opened::trusted`]) is not read whole: only
/// the members looked up are; any other file is digested as it is read
/// ([`layout_cache::Opened::key_of_file`]), and when its bytes were read
/// before, only those members are kept; else it is read whole.
pub fn load_claude_json(
    reads: &dyn Reads,
    locations: &Locations,
) -> Result<Option<ClaudeJson>, ConfigError> {
    load_claude_json_at(reads, locations, SystemTime::now)
}

/// [`load_claude_json`], the time of a reading told by `clock` (a test's
/// clock makes the file old).
pub(crate) fn load_claude_json_at(
    reads: &dyn Reads,
    locations: &Locations,
    clock: fn() -> SystemTime,
) -> Result<Option<ClaudeJson>, ConfigError> {
    let path = &locations.claude_json;
    let cached = Cached::of(locations, reads, path);
    // `reads` gives the bytes on disk exactly when they may be cached
    // (a preview's own text of the file may not): those are read here,
    // through the same checks as `fsx::read_regular`.
    if let Some(cached) = cached
        && reads.keeps_caches(path)
    {
        return read_from_disk(path, cached, &locations.local_key, clock);
    }
    let text = reads
        .read_text(path)
        .map_err(|source| ConfigError::read(path, source))?;
    text.map(|text| {
        parse_document_with(path, text, CLAUDE_JSON_EXPAND, cached).map(|document| ClaudeJson {
            document,
            partial: false,
        })
    })
    .transpose()
}

/// `~/.claude.json` at `path` read from disk with the layout cache: the
/// parts `project`'s lookups need when the file's fingerprint is trusted,
/// or when its bytes, digested as they are read, are ones the cache knows;
/// else the whole file, digested. Either reading of known bytes tells the
/// cache the fingerprint they were read with, when it did not change
/// during the reading.
fn read_from_disk(
    path: &Path,
    cached: Cached<'_>,
    project: &str,
    clock: fn() -> SystemTime,
) -> Result<Option<ClaudeJson>, ConfigError> {
    let read_error = |source| ConfigError::read(path, source);
    let cache = layout_cache::open(cached.file);
    let mut trust = true;
    loop {
        // The time before the file is looked at: a change after it moves
        // the file's `ctime` past it, less the margin.
        let at = clock();
        let Some(mut file) = fsx::open_regular(path).map_err(read_error)? else {
            return Ok(None);
        };
        let metadata = file.metadata().map_err(read_error)?;
        let before = Fingerprint::of(&metadata);
        if trust
            && let Some(fingerprint) = before
            && let Some(layout) = cache.trusted(&fingerprint, CLAUDE_JSON_EXPAND)
        {
            if let Some(document) = parts::read(&file, layout, project, &fingerprint, None) {
                return Ok(Some(ClaudeJson {
                    document,
                    partial: true,
                }));
            }
            // Changed while its parts were read, or not as laid out: the
            // file is opened and read whole anew.
            trust = false;
            continue;
        }
        // Not trusted (racy, or of a fingerprint the cache does not know):
        // its bytes are digested as they are read, never held whole, and
        // when the cache knows them, only the parts are kept, read again
        // where the layout says; the fingerprint, the same from before the
        // digest to after those reads, is recorded as verified.
        if trust
            && let Some(fingerprint) = before
            && cache.may_hold(fingerprint.size(), CLAUDE_JSON_EXPAND)
        {
            // The keys a lookup reads are kept as they pass, for the one
            // layout the file can have if the cache knows its bytes.
            let sole = cache.sole_layout_of_size(fingerprint.size(), CLAUDE_JSON_EXPAND);
            let mut captured = Captured::new(sole.into_iter().flat_map(parts::key_spans));
            if let Some(key) = cache.key_of_file_keeping(
                &mut file,
                fingerprint.size(),
                CLAUDE_JSON_EXPAND,
                &mut captured,
            ) && let Some(layout) = cache.layout_of(&key)
                && let Some(document) = parts::read(
                    &file,
                    layout,
                    project,
                    &fingerprint,
                    sole.filter(|sole| std::ptr::eq(*sole, layout))
                        .map(|_| &captured),
                )
            {
                cache.confirm(&key, cached.keep, Verified::new(fingerprint, at));
                return Ok(Some(ClaudeJson {
                    document,
                    partial: true,
                }));
            }
            // Not known (bytes that are not UTF-8 never are), changed
            // meanwhile or not as laid out: opened and read whole anew,
            // which reports any error with its line and column and puts a
            // new layout in the cache.
            trust = false;
            continue;
        }
        let mut bytes = fsx::os::read_buffer(usize::try_from(metadata.len()).unwrap_or_default());
        file.read_to_end(&mut bytes).map_err(read_error)?;
        let after = file
            .metadata()
            .ok()
            .and_then(|metadata| Fingerprint::of(&metadata));
        let verified = before
            .filter(|before| after == Some(*before) && before.size() == bytes.len() as u64)
            .and_then(|fingerprint| Verified::new(fingerprint, at));
        let text = String::from_utf8(bytes)
            .map_err(|error| read_error(io::Error::new(io::ErrorKind::InvalidData, error)))?;
        return cache
            .parse(text, CLAUDE_JSON_EXPAND, cached.keep, verified)
            .map(|document| {
                Some(ClaudeJson {
                    document,
                    partial: false,
                })
            })
            .map_err(|error| document_error(path, error));
    }
}

/// Reads and parses a JSON config file; `None` when it does not exist. Only
/// a regular file is read ([`ConfigError::NotRegular`] otherwise, never
/// opened); an empty or blank file is an empty document
/// ([`JsonDocument::is_empty`]). `expand` as in
/// [`JsonDocument::parse_expanding`].
pub fn load_document(path: &Path, expand: &[&str]) -> Result<Option<JsonDocument>, ConfigError> {
    load_document_from(&fsx::Disk, path, expand)
}

/// [`load_document`], read through `reads`.
pub fn load_document_from(
    reads: &dyn Reads,
    path: &Path,
    expand: &[&str],
) -> Result<Option<JsonDocument>, ConfigError> {
    let text = reads
        .read_text(path)
        .map_err(|source| ConfigError::read(path, source))?;
    text.map(|text| parse_document(path, text, expand))
        .transpose()
}

/// Parses the text an edit starts from: `original` as read (`None`: the
/// file does not exist, so the edit creates it). A file that exists but is
/// empty or blank is refused ([`ConfigError::Empty`]): Claude Code reports an
/// empty `~/.claude.json` as corrupted, and reads an empty `.mcp.json` as
/// `{}`, but an empty file is as likely one truncated by accident (`jq …
/// .mcp.json > .mcp.json`), and mcpenv never writes over what it cannot
/// read as meant.
pub fn parse_for_edit(
    path: &Path,
    original: Option<String>,
    expand: &[&str],
    cached: Option<Cached<'_>>,
) -> Result<JsonDocument, ConfigError> {
    let existed = original.is_some();
    let document = parse_document_with(path, original.unwrap_or_default(), expand, cached)?;
    if existed && document.is_empty() {
        return Err(ConfigError::Empty {
            path: path.to_path_buf(),
            claude_refuses: !is_project_file(path),
        });
    }
    Ok(document)
}

fn is_project_file(path: &Path) -> bool {
    path.file_name().is_some_and(|name| name == ".mcp.json")
}

/// Refuses a project file of `size` bytes (as it is, or as an edit would
/// leave it) that Claude Code would skip: over [`MAX_PROJECT_FILE_BYTES`].
pub fn check_project_file_size(path: &Path, size: u64) -> Result<(), ConfigError> {
    if size > MAX_PROJECT_FILE_BYTES {
        return Err(ConfigError::TooLarge {
            path: path.to_path_buf(),
            size,
            limit: MAX_PROJECT_FILE_BYTES,
        });
    }
    Ok(())
}

/// Parses `text` read from `path`, naming the file in any error.
pub fn parse_document(
    path: &Path,
    text: String,
    expand: &[&str],
) -> Result<JsonDocument, ConfigError> {
    parse_document_with(path, text, expand, None)
}

/// [`parse_document`], through the layout cache when `cached` says so.
pub fn parse_document_with(
    path: &Path,
    text: String,
    expand: &[&str],
    cached: Option<Cached<'_>>,
) -> Result<JsonDocument, ConfigError> {
    match cached {
        Some(cached) => layout_cache::parse(cached.file, text, expand, cached.keep),
        None => JsonDocument::parse_expanding(text, expand),
    }
    .map_err(|error| document_error(path, error))
}

/// Names the file in a document error.
pub fn document_error(path: &Path, error: DocumentError) -> ConfigError {
    match error {
        DocumentError::Syntax(syntax) => ConfigError::Syntax {
            path: path.to_path_buf(),
            line: syntax.line,
            column: syntax.column,
            message: syntax.message,
        },
        DocumentError::Shape(shape) => ConfigError::shape(path, &shape),
        DocumentError::Overlap => ConfigError::Shape {
            path: path.to_path_buf(),
            detail: "mcpenv planned two overlapping changes (a bug; nothing was written)"
                .to_string(),
        },
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::fs::{self, File};
    use std::os::unix::fs::FileExt;
    use std::path::PathBuf;
    use std::time::Duration;

    use proptest::prelude::*;
    use serde_json::Value;

    use super::*;
    use crate::config::inventory::{approval_keys, servers_at};

    /// A clock an hour ahead: every file looks older than the margin when
    /// verified, so the next reading trusts its fingerprint.
    fn later() -> SystemTime {
        SystemTime::now() + Duration::from_secs(3600)
    }

    fn locations(dir: &Path, project: &str, cache: bool) -> Locations {
        Locations {
            home: dir.to_path_buf(),
            claude_json: dir.join(".claude.json"),
            claude_data_dir: dir.join(".claude"),
            working_dir: dir.to_path_buf(),
            git_root: None,
            local_key: project.to_string(),
            managed_dir: dir.join("managed"),
            state_dir: dir.join("state"),
            layout_cache: cache.then(|| layout_cache::Setting {
                file: dir.join("cache").join(layout_cache::FILE_NAME),
                write: true,
            }),
        }
    }

    /// Everything a reader takes from the file, errors as printed.
    fn answers(loaded: &Result<Option<ClaudeJson>, ConfigError>, project: &str) -> String {
        let claude = match loaded {
            Ok(Some(claude)) => claude,
            Ok(None) => return "no file".to_string(),
            Err(error) => return format!("error: {error}"),
        };
        if claude.is_empty() {
            return "empty".to_string();
        }
        let document = claude.lookups();
        let path = Path::new("/c.json");
        let shown = |result: Result<Vec<(String, Value)>, ConfigError>| match result {
            Ok(servers) => format!("{servers:?}"),
            Err(error) => format!("error: {error}"),
        };
        let approvals = match approval_keys(document, path, &["projects", project]) {
            Ok(keys) => format!("{keys:?}"),
            Err(error) => format!("error: {error}"),
        };
        format!(
            "user {}\nlocal {}\napprovals {approvals}",
            shown(servers_at(document, path, &["mcpServers"])),
            shown(servers_at(
                document,
                path,
                &["projects", project, "mcpServers"]
            )),
        )
    }

    /// The file read without the cache, then with it (the digest path,
    /// which trusts the file from then on), then from its trusted
    /// fingerprint, then rewritten with the same bytes and another
    /// fingerprint and read racy (digested as read, its parts kept): the
    /// same answers each time. Returns whether the third reading read parts
    /// only, which the fourth must do as well.
    fn read_four_ways(dir: &Path, text: &str, project: &str) -> bool {
        fs::write(dir.join(".claude.json"), text).unwrap();
        let _ = fs::remove_dir_all(dir.join("cache"));
        let off = load_claude_json_at(&fsx::Disk, &locations(dir, project, false), later);
        let expected = answers(&off, project);
        let on = locations(dir, project, true);
        let digested = load_claude_json_at(&fsx::Disk, &on, later);
        assert_eq!(answers(&digested, project), expected, "digest path\n{text}");
        assert!(
            !digested
                .as_ref()
                .is_ok_and(|read| read.as_ref().is_some_and(ClaudeJson::is_partial))
        );
        let trusted = load_claude_json_at(&fsx::Disk, &on, later);
        assert_eq!(answers(&trusted, project), expected, "trusted path\n{text}");
        let partial = matches!(trusted, Ok(Some(ref read)) if read.is_partial());
        if !matches!(trusted, Ok(Some(_))) {
            return partial;
        }
        // The same bytes written again, the times set apart: a fingerprint
        // the cache does not trust, a file within the margin (racy).
        let path = dir.join(".claude.json");
        fs::write(&path, text).unwrap();
        let file = fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(1))
            .unwrap();
        drop(file);
        let racy = load_claude_json_at(&fsx::Disk, &on, SystemTime::now);
        assert_eq!(answers(&racy, project), expected, "racy path\n{text}");
        let racy_partial = matches!(racy, Ok(Some(ref read)) if read.is_partial());
        assert_eq!(racy_partial, partial, "racy path\n{text}");
        partial
    }

    fn raw_key(name: &str, escaped: bool) -> String {
        let plain = serde_json::to_string(name).unwrap();
        if escaped {
            plain.replace('/', "\\/").replace('é', "\\u00e9")
        } else {
            plain
        }
    }

    fn object(members: &[(String, String)], unit: &str) -> String {
        if members.is_empty() {
            return "{}".to_string();
        }
        let body: Vec<String> = members
            .iter()
            .map(|(key, value)| format!("{unit}{key}: {value}"))
            .collect();
        format!("{{\n{}\n}}", body.join(",\n"))
    }

    fn servers() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("{}".to_string()),
            Just(r#"{"a": {"command": "x", "args": ["1"]}, "b": {"type": "http", "url": "https://h"}}"#.to_string()),
            Just(r#"{"a": {"command": "x"}, "a": {"command": "y"}}"#.to_string()),
            Just("[1, 2]".to_string()),
            Just("\"no\"".to_string()),
            Just("null".to_string()),
        ]
    }

    fn entry() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => (
                prop::option::of(servers()),
                prop::option::of(any::<bool>()),
                prop::option::of(Just(r#"["a", "z"]"#)),
                0..3usize,
            )
                .prop_map(|(servers, trusted, disabled, history)| {
                    let mut members = vec![(
                        "\"history\"".to_string(),
                        format!("[{}]", vec![r#"{"display": "x \" } {", "n": 1.50}"#; history].join(", ")),
                    )];
                    if let Some(servers) = servers {
                        members.push(("\"mcpServers\"".to_string(), servers));
                    }
                    if let Some(trusted) = trusted {
                        members.push(("\"hasTrustDialogAccepted\"".to_string(), trusted.to_string()));
                    }
                    if let Some(disabled) = disabled {
                        members.push(("\"disabledMcpServers\"".to_string(), disabled.to_string()));
                    }
                    object(&members, "  ")
                }),
            1 => Just("null".to_string()),
            1 => Just("[]".to_string()),
        ]
    }

    const NAMES: [&str; 4] = ["/p", "/q", "/p/é", "/w\"x"];

    fn projects() -> impl Strategy<Value = String> {
        prop_oneof![
            6 => prop::collection::vec((prop::sample::select(NAMES.to_vec()), any::<bool>(), entry()), 0..5)
                .prop_map(|members| {
                    let members: Vec<(String, String)> = members
                        .into_iter()
                        .map(|(name, escaped, entry)| (raw_key(name, escaped), entry))
                        .collect();
                    object(&members, "    ")
                }),
            1 => Just("[]".to_string()),
        ]
    }

    fn document() -> impl Strategy<Value = String> {
        (
            prop::option::of(servers()),
            prop::option::of(projects()),
            prop::option::of(servers()),
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(|(servers, projects, again, first, bom)| {
                let mut members = vec![("\"numStartups\"".to_string(), "12".to_string())];
                if let Some(projects) = projects {
                    members.push(("\"projects\"".to_string(), projects));
                }
                if let Some(servers) = servers {
                    let at = if first { 0 } else { members.len() };
                    members.insert(at, ("\"mcpServers\"".to_string(), servers));
                }
                if let Some(again) = again {
                    members.push(("\"mcp\\u0053ervers\"".to_string(), again));
                }
                let text = object(&members, "  ");
                if bom { format!("\u{feff}{text}") } else { text }
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Random documents, random projects: the trusted path, the digest
        /// path and no cache give the same answers, and the trusted path
        /// reads parts whenever `projects` is an object or absent.
        #[test]
        fn parts_give_what_the_whole_file_gives(
            text in document(),
            project in prop::sample::select(NAMES.to_vec()),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let partial = read_four_ways(dir.path(), &text, project);
            let projects_object = !text.contains("\"projects\": []");
            prop_assert_eq!(partial, projects_object, "{}", text);
        }
    }

    #[test]
    fn errors_are_reported_as_without_the_cache() {
        let dir = tempfile::tempdir().unwrap();
        for text in [
            "{\"a\": 1,\n}",
            "",
            "  \n",
            "[1]",
            "{\"projects\": {\"/p\": 1}}",
        ] {
            read_four_ways(dir.path(), text, "/p");
        }
    }

    fn setup(text: &str) -> (tempfile::TempDir, Locations) {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join(".claude.json"), text).unwrap();
        let locations = locations(dir.path(), "/p", true);
        (dir, locations)
    }

    fn partial(locations: &Locations, clock: fn() -> SystemTime) -> bool {
        load_claude_json_at(&fsx::Disk, locations, clock)
            .unwrap()
            .unwrap()
            .is_partial()
    }

    const TEXT: &str =
        r#"{"projects": {"/p": {"mcpServers": {"a": {"command": "old"}}}}, "history": "x"}"#;

    /// The fingerprint of the file at `path`, and whether the cache trusts
    /// it.
    fn trusted_now(locations: &Locations) -> bool {
        let metadata = fs::metadata(&locations.claude_json).unwrap();
        let fingerprint = Fingerprint::of(&metadata).unwrap();
        let cache_file = &locations.layout_cache.as_ref().unwrap().file;
        layout_cache::open(cache_file)
            .trusted(&fingerprint, CLAUDE_JSON_EXPAND)
            .is_some()
    }

    #[test]
    fn a_file_younger_than_the_margin_is_digested_each_time() {
        let (_dir, locations) = setup(TEXT);
        // Read whole the first time, its layout cached; then digested as
        // it is read, and its parts alone kept; never trusted.
        assert!(!partial(&locations, SystemTime::now));
        for _ in 0..3 {
            assert!(partial(&locations, SystemTime::now));
            assert!(!trusted_now(&locations));
        }
        // Read when older than the margin, the digest of the streamed
        // bytes records the fingerprint: the next reading trusts it.
        assert!(partial(&locations, later));
        assert!(trusted_now(&locations));
    }

    #[test]
    fn a_racy_file_not_as_cached_is_read_whole() {
        let (dir, locations) = setup(TEXT);
        let path = dir.path().join(".claude.json");
        assert!(!partial(&locations, SystemTime::now));
        assert!(partial(&locations, SystemTime::now));
        // Same length, other bytes: not known, read whole (and cached).
        fs::write(&path, TEXT.replace("old", "new")).unwrap();
        let read = load_claude_json_at(&fsx::Disk, &locations, SystemTime::now);
        assert!(!read.as_ref().unwrap().as_ref().unwrap().is_partial());
        assert!(answers(&read, "/p").contains("new"));
        // Not UTF-8 at the same length: the whole reading's error.
        let mut bytes = TEXT.as_bytes().to_vec();
        bytes[TEXT.find("old").unwrap() + 2] = 0xff;
        fs::write(&path, &bytes).unwrap();
        let read = load_claude_json_at(&fsx::Disk, &locations, SystemTime::now);
        let off = load_claude_json_at(&fsx::Disk, &locations_off(&locations), later);
        assert!(read.is_err());
        assert_eq!(answers(&read, "/p"), answers(&off, "/p"));
    }

    fn locations_off(locations: &Locations) -> Locations {
        Locations {
            layout_cache: None,
            ..locations.clone()
        }
    }

    #[test]
    fn a_changed_file_is_never_taken_for_the_trusted_one() {
        let (dir, locations) = setup(TEXT);
        let path = dir.path().join(".claude.json");
        // Each change comes after the verification, in a later tick of
        // the kernel's clock, as it does outside a test.
        let a_tick_later = || std::thread::sleep(Duration::from_millis(30));
        assert!(!partial(&locations, later));
        assert!(partial(&locations, later));
        let local = || {
            let read = load_claude_json_at(&fsx::Disk, &locations, later)
                .unwrap()
                .unwrap();
            (read.is_partial(), answers(&Ok(Some(read)), "/p"))
        };
        // Rewritten in place, same size, same inode.
        a_tick_later();
        let file = fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.write_all_at(b"new", TEXT.find("old").unwrap() as u64)
            .unwrap();
        drop(file);
        let (was_partial, answer) = local();
        assert!(!was_partial && answer.contains("new"), "{answer}");
        // The mtime set back to what it was: the ctime moved all the same.
        a_tick_later();
        let modified = fs::metadata(&path).unwrap().modified().unwrap();
        let file = fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.write_all_at(b"ne2", TEXT.find("old").unwrap() as u64)
            .unwrap();
        file.set_modified(modified).unwrap();
        drop(file);
        let (was_partial, answer) = local();
        assert!(!was_partial && answer.contains("ne2"), "{answer}");
        // Another file renamed over it: another inode.
        a_tick_later();
        let other = dir.path().join("other.json");
        fs::write(&other, TEXT.replace("old", "ren")).unwrap();
        fs::rename(&other, &path).unwrap();
        let (was_partial, answer) = local();
        assert!(!was_partial && answer.contains("ren"), "{answer}");
        assert_eq!(local(), (true, answer));
    }

    /// [`TEXT`] read once with the cache (which then trusts it), opened
    /// again: the file, its fingerprint and the cache.
    fn opened_trusted<'a>(
        locations: &'a Locations,
        path: &Path,
    ) -> (File, Fingerprint, layout_cache::Opened<'a>) {
        assert!(!partial(locations, later));
        let file = File::open(path).unwrap();
        let fingerprint = Fingerprint::of(&file.metadata().unwrap()).unwrap();
        let cache = layout_cache::open(&locations.layout_cache.as_ref().unwrap().file);
        (file, fingerprint, cache)
    }

    #[test]
    fn parts_read_from_a_file_changed_since_its_stat_are_refused() {
        let (dir, locations) = setup(TEXT);
        let path = dir.path().join(".claude.json");
        let (file, fingerprint, cache) = opened_trusted(&locations, &path);
        let layout = cache.trusted(&fingerprint, CLAUDE_JSON_EXPAND).unwrap();
        assert!(parts::read(&file, layout, "/p", &fingerprint, None).is_some());
        // Changed between the `stat` and the `pread`s.
        std::thread::sleep(Duration::from_millis(30));
        fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .write_all_at(b"new", TEXT.find("old").unwrap() as u64)
            .unwrap();
        assert!(parts::read(&file, layout, "/p", &fingerprint, None).is_none());
        // And a layout that does not fit the bytes is refused.
        let mut wrong = layout.clone();
        for (_, members) in &mut wrong.objects {
            for member in members {
                member.key_span.start += 1;
            }
        }
        let fingerprint = Fingerprint::of(&file.metadata().unwrap()).unwrap();
        assert!(parts::read(&file, &wrong, "/p", &fingerprint, None).is_none());
    }

    #[test]
    fn keys_kept_as_the_file_was_digested_are_not_read_again() {
        let (dir, locations) = setup(TEXT);
        let path = dir.path().join(".claude.json");
        let (file, fingerprint, cache) = opened_trusted(&locations, &path);
        let layout = cache.trusted(&fingerprint, CLAUDE_JSON_EXPAND).unwrap();
        // The project's key as kept says `/q`: its entry is found from
        // what was kept, not from a second reading of the file (which
        // finds no `/q`).
        let spans: Vec<_> = parts::key_spans(layout).collect();
        let mut captured = Captured::new(spans.iter().cloned());
        let kept = TEXT.replace("\"/p\"", "\"/q\"");
        let mut reader = kept.as_bytes();
        let size = fingerprint.size();
        cache
            .key_of_file_keeping(&mut reader, size, CLAUDE_JSON_EXPAND, &mut captured)
            .unwrap();
        let found = parts::read(&file, layout, "/q", &fingerprint, Some(&captured)).unwrap();
        assert!(found.text().contains("\"old\""), "{}", found.text());
        let read_again = parts::read(&file, layout, "/q", &fingerprint, None).unwrap();
        assert_eq!(read_again.text(), r#"{"projects":{}}"#);
    }

    #[test]
    fn a_preview_reads_through_its_session_not_the_disk() {
        struct Preview(PathBuf);
        impl Reads for Preview {
            fn read_regular(&self, _path: &Path) -> io::Result<Option<Vec<u8>>> {
                Ok(Some(
                    br#"{"mcpServers": {"previewed": {"command": "p"}}}"#.to_vec(),
                ))
            }
            fn keeps_caches(&self, path: &Path) -> bool {
                path != self.0
            }
        }
        let (dir, locations) = setup(TEXT);
        assert!(!partial(&locations, later));
        assert!(partial(&locations, later));
        let read =
            load_claude_json_at(&Preview(dir.path().join(".claude.json")), &locations, later);
        assert!(answers(&read, "/p").contains("previewed"));
    }
}
