//! The layout cache (`$XDG_CACHE_HOME/mcpenv/claude-json-layouts`, here
//! `[ROOT]/cache/mcpenv/…`): commands read
//! and write exactly as without it, a file changed since is read anew, and
//! a cache that is damaged, foreign or a symbolic link is ignored and
//! replaced. Whether a reading hit the cache shows in the cache file: a hit
//! leaves it alone, a miss replaces it (a new inode); so does the one hit
//! that records that the file, older than the margin (3 s), is trusted
//! from then on, which these young files only reach on a slow machine.
//! A trusted file is answered from the parts read alone: the same answers,
//! and never a stale one.

use std::fs;
use std::os::unix::fs::{FileExt, MetadataExt, PermissionsExt};
use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::big_config;
use crate::harness::{CommandOutput, TestEnv};

const CACHE: &str = "cache/mcpenv/claude-json-layouts";
const SECRET: &str = "ghp_LayoutCacheNeverHoldsThis0123456789ab";

/// A world with a `~/.claude.json` of 30 projects (history, escapes, odd
/// numbers), this project's entry holding `local-db` and a server whose
/// `env` holds a planted secret.
fn world(cache: bool) -> TestEnv {
    let mut env = TestEnv::new();
    if !cache {
        env.set_env("MCPENV_LAYOUT_CACHE", "off");
    }
    let text = big_config::claude_json(30, 4, &env.key()).replace(
        "\"mcpServers\": {\n    \"memory\": {",
        &format!(
            "\"mcpServers\": {{\n    \"gh\": {{\"command\": \"gh-mcp\", \"env\": {{\"GITHUB_TOKEN\": \"{SECRET}\"}}}},\n    \"memory\": {{"
        ),
    );
    assert!(text.contains(SECRET));
    env.write("home/.claude.json", &text);
    env
}

fn cache_path(env: &TestEnv) -> PathBuf {
    env.root.join(CACHE)
}

/// The cache file's inode, `None` when there is none.
fn cache_inode(env: &TestEnv) -> Option<u64> {
    fs::symlink_metadata(cache_path(env))
        .ok()
        .map(|metadata| metadata.ino())
}

/// The layout cache's margin: a file whose `ctime` is older than this when
/// read is trusted from its fingerprint once its bytes are verified.
const MARGIN: Duration = Duration::from_secs(3);

/// Whether `~/.claude.json` is older than the margin now.
fn older_than_margin(env: &TestEnv) -> bool {
    let metadata = fs::metadata(env.home.join(".claude.json")).unwrap();
    let changed = UNIX_EPOCH
        + Duration::new(
            metadata.ctime().try_into().unwrap(),
            metadata.ctime_nsec().try_into().unwrap(),
        );
    SystemTime::now()
        .duration_since(changed)
        .is_ok_and(|age| age > MARGIN)
}

/// Whether the reading that found the cache file at `before` hit the cache:
/// it left it alone, or the file was old enough for the hit to record that
/// it is trusted.
fn hit(env: &TestEnv, before: Option<u64>) -> bool {
    cache_inode(env) == before || older_than_margin(env)
}

fn same(on: &CommandOutput, off: &CommandOutput) {
    assert_eq!(on.to_string(), off.to_string());
}

#[test]
fn with_and_without_the_cache_commands_print_and_write_the_same() {
    let on = world(true);
    let off = world(false);
    let steps: [&[&str]; 9] = [
        &["list"],
        &["get", "local-db"],
        &["add", "fresh", "-e", "K=v", "--", "npx", "pkg"],
        &["list", "--json"],
        &["add", "-s", "user", "mine", "--", "uvx", "tool"],
        &["get", "fresh", "--json"],
        &["remove", "local-db"],
        &["remove", "-s", "user", "memory"],
        &["list"],
    ];
    for args in steps {
        let before = cache_inode(&on);
        let (a, b) = (on.run(args), off.run(args));
        same(&a, &b);
        assert_eq!(a.code, 0, "{args:?}:\n{a}");
        assert!(
            on.read("home/.claude.json") == off.read("home/.claude.json"),
            "{args:?}"
        );
        if args[0] != "add" && args[0] != "remove" && before.is_some() {
            // A reading of the file the previous command read or wrote
            // hits the cache: it is not written again.
            assert!(hit(&on, before), "{args:?} missed the cache");
        }
    }
    assert!(cache_inode(&on).is_some());
    assert!(!off.root.join(CACHE).exists());
    // Another program writes the same bytes again (Claude Code saves the
    // file often): a racy file of a new fingerprint, digested as it is
    // read and answered from its parts, the cache left alone.
    for env in [&on, &off] {
        let path = env.home.join(".claude.json");
        fs::write(&path, fs::read(&path).unwrap()).unwrap();
    }
    for args in [
        &["list"][..],
        &["get", "fresh", "--json"],
        &["env", "--json"],
    ] {
        let before = cache_inode(&on);
        same(&on.run(args), &off.run(args));
        assert!(hit(&on, before), "{args:?} missed the cache");
    }
}

#[test]
fn a_file_changed_to_the_same_length_is_read_anew() {
    let on = world(true);
    let off = world(false);
    on.run(&["list"]).expect_code(0);
    // Another writer changes one character of a history entry: same length,
    // other bytes. The layout is the same here, and still not taken.
    for env in [&on, &off] {
        let text = fs::read_to_string(env.home.join(".claude.json")).unwrap();
        let changed = text.replacen("refactor the parser", "refactor the parsex", 1);
        assert_eq!(changed.len(), text.len());
        fs::write(env.home.join(".claude.json"), &changed).unwrap();
    }
    let before = cache_inode(&on);
    same(&on.run(&["list"]), &off.run(&["list"]));
    assert_ne!(cache_inode(&on), before, "the changed file hit the cache");
    // Then a server's command changes, length kept, and members move: a
    // stale layout would point into the wrong bytes.
    for env in [&on, &off] {
        let text = fs::read_to_string(env.home.join(".claude.json")).unwrap();
        let changed = text
            .replacen("\"command\": \"uvx\"", "\"command\": \"uvy\"", 1)
            .replacen("\"args\": [\n", "\"args\":[\n ", 1);
        assert_eq!(changed.len(), text.len());
        fs::write(env.home.join(".claude.json"), &changed).unwrap();
    }
    let (a, b) = (on.run(&["get", "local-db"]), off.run(&["get", "local-db"]));
    same(&a, &b);
    assert!(a.stdout.contains("uvy"), "{a}");
    let (a, b) = (
        on.run(&["add", "two", "--", "npx", "two"]),
        off.run(&["add", "two", "--", "npx", "two"]),
    );
    same(&a, &b);
    assert!(on.read("home/.claude.json") == off.read("home/.claude.json"));
}

/// What a test puts where the cache goes.
type Plant<'a> = dyn Fn(&TestEnv) + 'a;

#[test]
fn a_damaged_foreign_or_linked_cache_is_ignored_and_replaced() {
    let reference = world(false);
    let expected = reference.run(&["get", "local-db"]).expect_code(0);
    let good = {
        let env = world(true);
        env.run(&["list"]).expect_code(0);
        env.bytes(CACHE)
    };
    let cases: [(&str, &Plant<'_>); 6] = [
        ("corrupt", &|env| {
            let mut bytes = good.clone();
            let middle = bytes.len() / 2;
            bytes[middle] ^= 0x55;
            fs::write(cache_path(env), bytes).unwrap();
        }),
        ("truncated", &|env| {
            fs::write(cache_path(env), &good[..good.len() / 2]).unwrap();
        }),
        ("empty", &|env| fs::write(cache_path(env), "").unwrap()),
        ("world-writable", &|env| {
            fs::write(cache_path(env), &good).unwrap();
            fs::set_permissions(cache_path(env), fs::Permissions::from_mode(0o666)).unwrap();
        }),
        ("a symbolic link", &|env| {
            let elsewhere = env.write("elsewhere/layouts", "");
            fs::write(&elsewhere, &good).unwrap();
            fs::set_permissions(&elsewhere, fs::Permissions::from_mode(0o600)).unwrap();
            std::os::unix::fs::symlink(&elsewhere, cache_path(env)).unwrap();
        }),
        ("a directory", &|env| {
            fs::create_dir(cache_path(env)).unwrap();
        }),
    ];
    for (what, plant) in cases {
        let env = world(true);
        fs::create_dir_all(cache_path(&env).parent().unwrap()).unwrap();
        plant(&env);
        let out = env.run(&["get", "local-db"]);
        assert_eq!(out.to_string(), expected.to_string(), "{what}");
        if what == "a directory" {
            continue;
        }
        let metadata = fs::symlink_metadata(cache_path(&env)).unwrap();
        assert!(metadata.is_file(), "{what}: not replaced by a file");
        assert_eq!(metadata.permissions().mode() & 0o777, 0o600, "{what}");
        // The next reading hits the new cache.
        let before = cache_inode(&env);
        assert_eq!(
            env.run(&["get", "local-db"]).to_string(),
            expected.to_string()
        );
        assert!(hit(&env, before), "{what}");
        if what == "a symbolic link" {
            assert_eq!(
                env.bytes("elsewhere/layouts"),
                good,
                "the link's target was written"
            );
        }
    }
}

#[test]
fn an_unwritable_cache_is_no_error() {
    let reference = world(false);
    let mut env = world(true);
    // The cache directory's place is taken by a file.
    env.write("home/cache-file", "x");
    env.set_env("XDG_CACHE_HOME", env.root.join("home/cache-file"));
    for args in [
        &["list"][..],
        &["add", "z", "--", "npx", "z"],
        &["remove", "z"],
    ] {
        same(&env.run(args), &reference.run(args));
        assert!(env.read("home/.claude.json") == reference.read("home/.claude.json"));
    }
}

#[test]
fn the_cache_holds_no_value_of_the_file_and_a_dry_run_writes_none() {
    let env = world(true);
    env.run(&["add", "--dry-run", "x", "--", "npx", "x"])
        .expect_code(0);
    assert!(!cache_path(&env).exists(), "a dry run wrote the cache");
    env.run(&["list"]).expect_code(0);
    // A dry run reads the cache all the same.
    let cached = cache_inode(&env);
    env.run(&["add", "--dry-run", "x", "--", "npx", "x"])
        .expect_code(0);
    assert!(hit(&env, cached));
    env.run(&["add", "x", "-e", &format!("T={SECRET}"), "--", "npx", "x"])
        .expect_code(0);
    assert_eq!(env.mode(CACHE), 0o600);
    assert_eq!(env.mode("cache/mcpenv") & 0o077, 0);
    let bytes = env.bytes(CACHE);
    let key = env.key();
    for value in [
        SECRET,
        "local-db",
        "gh-mcp",
        key.as_str(),
        "refactor",
        "dev@example.com",
    ] {
        assert!(
            !bytes
                .windows(value.len())
                .any(|window| window == value.as_bytes()),
            "the cache holds `{value}`"
        );
    }
    assert!(bytes.len() < 8192, "{} bytes", bytes.len());
}

/// Writes `new` over the first `old` of `~/.claude.json`, in place: the
/// same inode and size.
fn rewrite_in_place(env: &TestEnv, old: &str, new: &str) {
    assert_eq!(old.len(), new.len());
    let path = env.home.join(".claude.json");
    let at = fs::read_to_string(&path).unwrap().find(old).unwrap();
    let file = fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.write_all_at(new.as_bytes(), at as u64).unwrap();
}

#[test]
fn a_trusted_file_gives_the_same_answers_and_never_a_stale_one() {
    let on = world(true);
    let off = world(false);
    // Older than the margin: the next reading verifies the bytes and
    // records the file as trusted, the ones after read its parts alone.
    std::thread::sleep(MARGIN + Duration::from_millis(200));
    let readers: [&[&str]; 6] = [
        &["list"],
        &["get", "local-db"],
        &["list", "--json"],
        &["get", "memory", "--json"],
        &["check"],
        &["env", "--json"],
    ];
    let compare = |what: &str| {
        for args in readers {
            let (a, b) = (on.run(args), off.run(args));
            assert_eq!(a.to_string(), b.to_string(), "{what}: {args:?}");
        }
    };
    compare("verified");
    let before = cache_inode(&on);
    compare("trusted");
    assert_eq!(
        cache_inode(&on),
        before,
        "a trusted reading wrote the cache"
    );
    let get = |what: &str, expected: &str| {
        let (a, b) = (on.run(&["get", "local-db"]), off.run(&["get", "local-db"]));
        assert_eq!(a.to_string(), b.to_string(), "{what}");
        assert!(a.stdout.contains(expected), "{what}: {a}");
    };
    // Rewritten in place, size and inode kept: the ctime moves.
    for env in [&on, &off] {
        rewrite_in_place(env, "\"command\": \"uvx\"", "\"command\": \"uvy\"");
    }
    get("rewritten in place", "uvy");
    // Changed again and its mtime set back to the trusted one's: the
    // ctime moves all the same.
    for env in [&on, &off] {
        let path = env.home.join(".claude.json");
        let modified = fs::metadata(&path).unwrap().modified().unwrap();
        rewrite_in_place(env, "\"command\": \"uvy\"", "\"command\": \"uvz\"");
        let file = fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.set_modified(modified).unwrap();
    }
    get("mtime reset", "uvz");
    // Another file of the same size renamed over it: another inode.
    for env in [&on, &off] {
        let path = env.home.join(".claude.json");
        let text = fs::read_to_string(&path).unwrap().replacen(
            "\"command\": \"uvz\"",
            "\"command\": \"uvw\"",
            1,
        );
        let other = env.home.join(".claude.json.new");
        fs::write(&other, text).unwrap();
        fs::rename(&other, &path).unwrap();
    }
    get("renamed over", "uvw");
    // Each change above was within the margin of its reading (racy): read
    // whole and digested, every time.
    get("racy", "uvw");
    compare("after the changes");
}
