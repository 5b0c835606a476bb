//! Records what `mcpenv --version` says of the build: the commit it was
//! built from and the day (UTC; `SOURCE_DATE_EPOCH` when set, for
//! reproducible builds). Outside a git checkout (a crate from crates.io)
//! the commit is `unknown`. On Linux with glibc 2.36 or later, also packs
//! the binary's relative relocations (see [`pack_relative_relocations`]).

use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

fn main() {
    println!("cargo:rerun-if-env-changed=SOURCE_DATE_EPOCH");
    // A new commit (or checkout) changes HEAD or the branch it names.
    for path in [".git/HEAD", ".git/refs/heads", ".git/packed-refs"] {
        if std::path::Path::new(path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    let commit = Command::new("git")
        .args(["rev-parse", "--short=10", "HEAD"])
        .output()
        .ok()
        .filter(|output| output.status.success())
        .and_then(|output| String::from_utf8(output.stdout).ok())
        .map(|text| text.trim().to_string())
        .filter(|text| !text.is_empty())
        .unwrap_or_else(|| "unknown".to_string());
    let seconds = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|value| value.parse::<i64>().ok())
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |elapsed| elapsed.as_secs() as i64)
        });
    println!("cargo:rustc-env=MCPENV_COMMIT={commit}");
    println!("cargo:rustc-env=MCPENV_BUILD_DATE={}", civil_date(seconds));
    pack_relative_relocations();
}

/// Links the binary with `-z pack-relative-relocs` (DT_RELR): its ~18,000
/// relative relocations (pointers in static data, fixed up by the dynamic
/// loader at every start because the binary is position-independent) are
/// stored as a few kilobytes of bitmaps instead of 440 KB of entries, which
/// the loader reads and applies in a fraction of the time. ASLR is kept.
///
/// Only when the binary is built for the machine building it (not a cross
/// build), for Linux with glibc, and that machine's glibc is 2.36 or later:
/// such a binary needs glibc 2.36 at run time (the linker records a need of
/// `GLIBC_ABI_DT_RELR`, and an older loader refuses it rather than crash),
/// which the machine that built it has. Elsewhere the binary is linked as
/// before. `MCPENV_NO_RELR=1` turns it off, for a binary meant for older
/// systems or a linker that does not know the option.
fn pack_relative_relocations() {
    println!("cargo:rerun-if-env-changed=MCPENV_NO_RELR");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let native = var("TARGET") == var("HOST");
    let linux_gnu = var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu";
    let off = std::env::var_os("MCPENV_NO_RELR").is_some_and(|value| !value.is_empty());
    if native && linux_gnu && !off && glibc_at_least((2, 36)) {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether this machine's glibc (`getconf GNU_LIBC_VERSION`: `glibc 2.36`)
/// is at least `wanted`; false when that cannot be told.
fn glibc_at_least(wanted: (u32, u32)) -> bool {
    let Some(text) = Command::new("getconf")
        .arg("GNU_LIBC_VERSION")
        .output()
        .ok()
        .filter(|output| output.status.success())
        .and_then(|output| String::from_utf8(output.stdout).ok())
    else {
        return false;
    };
    let mut numbers = text
        .trim()
        .strip_prefix("glibc ")
        .unwrap_or_default()
        .split('.')
        .map(|part| part.parse::<u32>().ok());
    match (numbers.next().flatten(), numbers.next().flatten()) {
        (Some(major), Some(minor)) => (major, minor) >= wanted,
        _ => false,
    }
}

/// `YYYY-MM-DD` of a Unix time, in UTC (Howard Hinnant's `civil_from_days`;
/// a date crate for one line of a version string would be a dependency too
/// many).
fn civil_date(seconds: i64) -> String {
    let days = seconds.div_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}
