//! A stand-in for the 1Password CLI (`op`) for mcpenv's tests. Test-only: an
//! `[[example]]`, so `cargo install` leaves it out; the tests build it with
//! escargot and put it on a child's PATH under the name `op`
//! (`tests/cli/fake_op.rs`). The real `op` cannot be installed on the test
//! machines (it is on neither npm, PyPI nor Debian).
//!
//! It follows `op` 2's documented behaviour and, where the docs are silent,
//! the texts real `op` 2.35 and 2.39 printed (collected in the comments of
//! `tests/cli/fake_op.rs`, which pin every text to its source):
//! <https://developer.1password.com/docs/cli/reference/commands/read/>,
//! <https://developer.1password.com/docs/cli/secret-reference-syntax/>,
//! <https://developer.1password.com/docs/cli/reference/commands/whoami>.
//!
//! Commands: `op read [-n|--no-newline] [-f|--force] <reference>`,
//! `op whoami`, `op --version`; the global `--account <account>` and
//! `--no-color` are accepted anywhere and ignored. Anything else fails as
//! `op` fails: `[ERROR] YYYY/MM/DD HH:MM:SS <message>` on stderr, exit 1.
//!
//! Environment:
//! - `MCPENV_FAKE_OP_ITEMS`: a JSON file holding the account's vaults,
//!   `{"<vault>": {"<item>": {"<field>": <value>, …,
//!   "sections": {"<section>": {"<field>": <value>, …}}}}}`, where a value
//!   is a string, or `{"value": "…", "otp": "…"}` for a one-time-password
//!   field (`?attribute=otp` reads `otp`). Unset: an account with no vaults.
//!   Names match case-insensitively, as references do.
//! - `MCPENV_FAKE_OP_SIGNED_OUT`: when set, `read` and `whoami` fail as
//!   they do with no session.
//! - `MCPENV_FAKE_OP_LOG`: when set, every invocation appends its arguments
//!   as one JSON array line to this file, before doing anything else.
//!
//! A broken set-up (unreadable items file, a flag the stand-in does not
//! model) exits 3 with a `mcpenv-fake-op:` line, so it cannot pass for an
//! answer of `op`'s.

use std::io::Write;
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

/// What `op --version` prints: the newest version whose texts the stand-in follows.
const VERSION: &str = "2.39.0";

/// The sentence `op` prints when it has no session.
const NOT_SIGNED_IN: &str =
    "You are not currently signed in. Please run `op signin --help` for instructions";

/// Why a run failed.
enum Failure {
    /// A failure `op` itself reports: `[ERROR] <timestamp> <message>`, exit 1.
    Op(String),
    /// The test set the stand-in up wrongly: exit 3.
    Setup(String),
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Err(error) = log_call(&args) {
        eprintln!("mcpenv-fake-op: cannot append to MCPENV_FAKE_OP_LOG: {error}");
        return ExitCode::from(3);
    }
    match run(&args) {
        Ok(stdout) => {
            print!("{stdout}");
            ExitCode::SUCCESS
        }
        Err(Failure::Op(message)) => {
            eprintln!("[ERROR] {} {message}", timestamp());
            ExitCode::from(1)
        }
        Err(Failure::Setup(message)) => {
            eprintln!("mcpenv-fake-op: {message}");
            ExitCode::from(3)
        }
    }
}

/// Appends the arguments, as one JSON array line, to `MCPENV_FAKE_OP_LOG`.
fn log_call(args: &[String]) -> std::io::Result<()> {
    let Some(path) = std::env::var_os("MCPENV_FAKE_OP_LOG") else {
        return Ok(());
    };
    let mut line = serde_json::to_string(args).map_err(std::io::Error::other)?;
    line.push('\n');
    // One write of one line in append mode, so concurrent calls never interleave.
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?
        .write_all(line.as_bytes())
}

/// The command line, flags apart from the words.
#[derive(Default)]
struct Invocation {
    words: Vec<String>,
    version: bool,
    no_newline: bool,
    read_flags: Vec<String>,
}

/// Parses the arguments as cobra (which `op` uses) does: flags anywhere,
/// `--` ends them, short flags may be grouped.
fn parse(args: &[String]) -> Result<Invocation, Failure> {
    let mut invocation = Invocation::default();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--" => {
                invocation.words.extend(rest.by_ref().cloned());
            }
            "--version" => invocation.version = true,
            "--no-color" => {}
            "--account" => {
                if rest.next().is_none() {
                    return Err(op("flag needs an argument: --account".to_string()));
                }
            }
            "--no-newline" => {
                invocation.no_newline = true;
                invocation.read_flags.push(arg.clone());
            }
            "--force" => invocation.read_flags.push(arg.clone()),
            "--out-file" | "--file-mode" => {
                return Err(Failure::Setup(format!("the stand-in does not model {arg}")));
            }
            long if long.starts_with("--") => {
                let name = long.split_once('=').map_or(long, |(name, _)| name);
                match name {
                    "--account" => {}
                    "--out-file" | "--file-mode" => {
                        return Err(Failure::Setup(format!(
                            "the stand-in does not model {name}"
                        )));
                    }
                    _ => return Err(op(format!("unknown flag: {name}"))),
                }
            }
            short if short.starts_with('-') && short.len() > 1 => {
                for letter in short.chars().skip(1) {
                    match letter {
                        'n' => invocation.no_newline = true,
                        'f' => {}
                        'o' => {
                            return Err(Failure::Setup(
                                "the stand-in does not model -o".to_string(),
                            ));
                        }
                        _ => {
                            return Err(op(format!(
                                "unknown shorthand flag: '{letter}' in {short}"
                            )));
                        }
                    }
                }
                invocation.read_flags.push(arg.clone());
            }
            _ => invocation.words.push(arg.clone()),
        }
    }
    Ok(invocation)
}

fn run(args: &[String]) -> Result<String, Failure> {
    let invocation = parse(args)?;
    let command = invocation.words.first().map(String::as_str);
    if command != Some("read")
        && let Some(flag) = invocation.read_flags.first()
    {
        return Err(op(match flag.strip_prefix("--") {
            Some(_) => format!("unknown flag: {flag}"),
            None => {
                let letter = flag.chars().nth(1).unwrap_or('-');
                format!("unknown shorthand flag: '{letter}' in {flag}")
            }
        }));
    }
    match command {
        None if invocation.version => Ok(format!("{VERSION}\n")),
        // Real `op` prints its help here; tests have no use for it.
        None => Err(Failure::Setup("no command given".to_string())),
        Some("read") => match &invocation.words[1..] {
            [reference] => read(reference, invocation.no_newline),
            other => Err(op(format!("accepts 1 arg(s), received {}", other.len()))),
        },
        Some("whoami") => match &invocation.words[1..] {
            [] => whoami(),
            other => Err(op(format!("accepts 0 arg(s), received {}", other.len()))),
        },
        Some(other) => Err(op(format!("unknown command \"{other}\" for \"op\""))),
    }
}

fn op(message: String) -> Failure {
    Failure::Op(message)
}

fn signed_out() -> bool {
    std::env::var_os("MCPENV_FAKE_OP_SIGNED_OUT").is_some()
}

fn whoami() -> Result<String, Failure> {
    if signed_out() {
        return Err(op("account is not signed in".to_string()));
    }
    Ok("URL:          https://my.1password.com\n\
        Email:        fake-op@example.com\n\
        User ID:      FAKEOPUSER0000000000000000\n\
        User Type:    HUMAN\n"
        .to_string())
}

/// A parsed `op://vault/item[/section]/field[?attribute=otp]`.
struct Reference {
    vault: String,
    item: String,
    section: Option<String>,
    field: String,
    otp: bool,
}

/// Parses a secret reference; the error is the text after
/// `invalid secret reference '<reference>': `.
fn parse_reference(reference: &str) -> Result<Reference, String> {
    let Some(rest) = reference.strip_prefix("op://") else {
        return Err("secret references should start with 'op://'".to_string());
    };
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    // The characters the syntax allows besides `/`: letters, digits, `-`,
    // `_`, `.` and the space; anything else must be written as an ID.
    if let Some(bad) = path
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ' ' | '/')))
    {
        return Err(format!("invalid character in secret reference: '{bad}'"));
    }
    let parts: Vec<&str> = path.split('/').collect();
    let (vault, item, section, field) = match parts[..] {
        [vault, item, field] => (vault, item, None, field),
        [vault, item, section, field] => (vault, item, Some(section), field),
        ref short if short.len() < 3 => {
            return Err("too few '/': secret references should have at least vault, item and field specified".to_string());
        }
        _ => {
            return Err("too many '/': secret references should match op://<vault>/<item>[/<section>]/<field>".to_string());
        }
    };
    for (what, name) in [
        ("vault", Some(vault)),
        ("item", Some(item)),
        ("section", section),
        ("field", Some(field)),
    ] {
        if name == Some("") {
            return Err(format!("{what} can't be empty"));
        }
    }
    let mut otp = false;
    for parameter in query.split('&').filter(|p| !p.is_empty()) {
        match parameter.split_once('=') {
            Some(("attribute", "otp")) => otp = true,
            Some(("attribute", "value")) => {}
            _ => return Err(format!("unsupported query parameter '{parameter}'")),
        }
    }
    Ok(Reference {
        vault: vault.to_string(),
        item: item.to_string(),
        section: section.map(str::to_string),
        field: field.to_string(),
        otp,
    })
}

/// `op read <reference>`.
fn read(reference: &str, no_newline: bool) -> Result<String, Failure> {
    let fail = |cause: String| op(format!("could not read secret '{reference}': {cause}"));
    let parsed = parse_reference(reference)
        .map_err(|why| fail(format!("invalid secret reference '{reference}': {why}")))?;
    if signed_out() {
        return Err(fail(format!("error initializing client: {NOT_SIGNED_IN}")));
    }
    let vaults = load_items()?;
    let Reference {
        vault,
        item,
        section,
        field,
        otp,
    } = &parsed;
    let Some(items) = lookup(&vaults, vault) else {
        return Err(fail(format!(
            "could not get item {vault}/{item}: \"{vault}\" isn't a vault in this account. Specify the vault with its ID or name."
        )));
    };
    let items = object(items, vault)?;
    let Some(fields) = lookup(items, item) else {
        return Err(fail(format!(
            "could not get item {vault}/{item}: \"{item}\" isn't an item in the \"{vault}\" vault. Specify the item with its UUID, name, or domain."
        )));
    };
    let fields = object(fields, item)?;
    let value = find_field(fields, section.as_deref(), field)?.ok_or_else(|| {
        fail(format!(
            "item '{vault}/{item}' does not have a field '{field}'"
        ))
    })?;
    let secret = match value {
        Value::String(text) if !*otp => text.as_str(),
        Value::Object(attributes) => {
            let key = if *otp { "otp" } else { "value" };
            match attributes.get(key) {
                Some(Value::String(text)) => text.as_str(),
                None if *otp => {
                    return Err(fail(format!("field '{field}' has no one-time password")));
                }
                _ => {
                    return Err(Failure::Setup(format!(
                        "field `{field}`: `{key}` must be a string"
                    )));
                }
            }
        }
        Value::String(_) => {
            return Err(fail(format!("field '{field}' has no one-time password")));
        }
        _ => {
            return Err(Failure::Setup(format!(
                "field `{field}` must be a string or {{\"value\", \"otp\"}}"
            )));
        }
    };
    let newline = if no_newline { "" } else { "\n" };
    Ok(format!("{secret}{newline}"))
}

/// The vaults in `MCPENV_FAKE_OP_ITEMS` (none when it is unset).
fn load_items() -> Result<Map<String, Value>, Failure> {
    let Some(path) = std::env::var_os("MCPENV_FAKE_OP_ITEMS") else {
        return Ok(Map::new());
    };
    let shown = std::path::Path::new(&path).display().to_string();
    let text = std::fs::read_to_string(&path)
        .map_err(|error| Failure::Setup(format!("cannot read `{shown}`: {error}")))?;
    match serde_json::from_str(&text) {
        Ok(Value::Object(vaults)) => Ok(vaults),
        Ok(_) => Err(Failure::Setup(format!("`{shown}` is not a JSON object"))),
        Err(error) => Err(Failure::Setup(format!("`{shown}` is not JSON: {error}"))),
    }
}

fn object<'a>(value: &'a Value, name: &str) -> Result<&'a Map<String, Value>, Failure> {
    value
        .as_object()
        .ok_or_else(|| Failure::Setup(format!("`{name}` must be a JSON object")))
}

/// The entry whose name matches `name` ignoring case, as references match.
fn lookup<'a>(map: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    map.iter()
        .find(|(key, _)| key.eq_ignore_ascii_case(name))
        .map(|(_, value)| value)
}

/// The field `field` of an item: in `section` when given; otherwise at the
/// top level first, then in any section.
fn find_field<'a>(
    item: &'a Map<String, Value>,
    section: Option<&str>,
    field: &str,
) -> Result<Option<&'a Value>, Failure> {
    let sections = match item.get("sections") {
        None => None,
        Some(sections) => Some(object(sections, "sections")?),
    };
    let in_section = |fields: &'a Value| -> Result<Option<&'a Value>, Failure> {
        Ok(lookup(object(fields, "a section")?, field))
    };
    if let Some(section) = section {
        return match sections.and_then(|all| lookup(all, section)) {
            Some(fields) => in_section(fields),
            None => Ok(None),
        };
    }
    let top = item
        .iter()
        .filter(|(key, _)| key.as_str() != "sections")
        .find(|(key, _)| key.eq_ignore_ascii_case(field))
        .map(|(_, value)| value);
    if top.is_some() {
        return Ok(top);
    }
    for fields in sections.into_iter().flat_map(Map::values) {
        if let Some(value) = in_section(fields)? {
            return Ok(Some(value));
        }
    }
    Ok(None)
}

/// `op`'s log timestamp, `YYYY/MM/DD HH:MM:SS`, in UTC (real `op` uses local
/// time, which is UTC in the tests' cleared environment). Computed by hand
/// because the project has no date crate and this is one line of output.
fn timestamp() -> String {
    let seconds = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs());
    let (days, time) = (seconds / 86_400, seconds % 86_400);
    let (year, month, day) = civil_from_days(i64::try_from(days).unwrap_or(0));
    format!(
        "{year:04}/{month:02}/{day:02} {:02}:{:02}:{:02}",
        time / 3600,
        time % 3600 / 60,
        time % 60
    )
}

/// Howard Hinnant's `civil_from_days`: days since 1970-01-01 to a
/// proleptic Gregorian (year, month, day).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}
