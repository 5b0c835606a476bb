//! Claude Code's `${VAR}` placeholders: finding them, expanding them, and
//! spotting look-alike forms that Claude Code leaves alone.
//!
//! This is the one module that knows the rule. Claude Code runs one global,
//! non-recursive pass of `\$\{([A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?)\}` over
//! each expanded field: `${VAR}` becomes the value when the variable is set
//! (even to `""`) and stays literal otherwise; `${VAR:-d}` becomes the value
//! when set (an empty value beats the default, unlike `sh`) and `d`
//! otherwise. Nothing escapes a placeholder: `$${A}` is `$` then `${A}`.

use std::ops::Range;
use std::sync::LazyLock;

use regex::{Captures, Regex};

/// Compiles one of this module's constant patterns.
fn pattern(source: &str) -> Regex {
    // Invariant: every caller passes a literal pattern that the tests compile.
    Regex::new(source).expect("constant pattern is valid")
}

/// Claude Code's pattern with the name and the default split into groups 1
/// and 2; it matches exactly the same spans as the original.
static REFERENCE: LazyLock<Regex> =
    LazyLock::new(|| pattern(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}"));

/// `$NAME` without braces. No valid reference contains one except inside its
/// default, so matches never straddle a reference.
static BARE: LazyLock<Regex> = LazyLock::new(|| pattern(r"\$([A-Za-z_][A-Za-z0-9_]*)"));

/// Any `${…}` without a `$` inside; the `$` exclusion keeps these spans from
/// swallowing a valid reference that starts inside them.
static BRACED: LazyLock<Regex> = LazyLock::new(|| pattern(r"\$\{([^}$]*)\}"));

/// Cursor's and VS Code's `${env:NAME}`, spaces tolerated.
static ENV_PREFIX: LazyLock<Regex> =
    LazyLock::new(|| pattern(r"^\s*env\s*:\s*([A-Za-z_][A-Za-z0-9_]*)\s*$"));

/// VS Code's `${input:id}` prompt.
static INPUT_PREFIX: LazyLock<Regex> = LazyLock::new(|| pattern(r"^\s*input\s*:\s*(\S.*?)\s*$"));

/// A name alone, padded by spaces (`${ VAR }`).
static SPACED: LazyLock<Regex> = LazyLock::new(|| pattern(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*$"));

/// Shell parameter operators other than Claude Code's `:-`, or `:-` with
/// spaces around the name.
static OPERATOR: LazyLock<Regex> =
    LazyLock::new(|| pattern(r"(?s)^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(:-|:=|:\?|:\+|-|=|\?|\+)(.*)$"));

/// opencode's `{env:NAME}`.
static ENV_BRACES: LazyLock<Regex> =
    LazyLock::new(|| pattern(r"\{\s*env\s*:\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}"));

/// One `${NAME}` or `${NAME:-default}` that Claude Code expands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// The variable name.
    pub name: String,
    /// The text after `:-`, if any (may be empty).
    pub default: Option<String>,
    /// Byte range of the whole `${…}` in the text.
    pub span: Range<usize>,
}

impl Reference {
    /// Reads one match of [`REFERENCE`].
    fn from_captures(captures: &Captures<'_>) -> Option<Self> {
        Some(Self {
            name: captures.get(1)?.as_str().to_owned(),
            default: captures.get(2).map(|default| default.as_str().to_owned()),
            span: captures.get(0)?.range(),
        })
    }
}

/// Whether `text` may hold a form [`unsupported_forms`] reports: every
/// form starts with `$` or is `{env:…}`, and most strings hold neither.
pub fn may_hold_forms(text: &str) -> bool {
    // One pass for both (a scan asks this of every value it meets).
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(at) = memchr::memchr2(b'$', b'{', &bytes[from..]) {
        let at = from + at;
        if bytes[at] == b'$' || bytes[at..].starts_with(b"{env:") {
            return true;
        }
        from = at + 1;
    }
    false
}

/// Whether `text` may hold a reference [`references`] finds: each starts
/// with `$`, and most strings hold none.
pub fn may_hold_references(text: &str) -> bool {
    text.contains('$')
}

/// Every reference Claude Code expands in `text`, left to right and
/// non-overlapping, exactly as its pattern finds them.
pub fn references(text: &str) -> Vec<Reference> {
    // Most strings hold no `$` at all; skip the regex for them.
    if !may_hold_references(text) {
        return Vec::new();
    }
    REFERENCE
        .captures_iter(text)
        .filter_map(|captures| Reference::from_captures(&captures))
        .collect()
}

/// The result of expanding one string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expansion {
    /// The expanded text.
    pub text: String,
    /// Names of `${NAME}` references left literal because the variable is
    /// unset; deduplicated, in order of first appearance.
    pub missing: Vec<String>,
}

/// Expands `text` the way Claude Code does, asking `lookup` for each
/// variable (`None` means unset; `Some("")` is set and empty).
pub fn expand(text: &str, lookup: impl Fn(&str) -> Option<String>) -> Expansion {
    let mut expanded = String::with_capacity(text.len());
    let mut missing: Vec<String> = Vec::new();
    let mut copied = 0;
    for reference in references(text) {
        expanded.push_str(&text[copied..reference.span.start]);
        match (lookup(&reference.name), reference.default) {
            (Some(value), _) => expanded.push_str(&value),
            (None, Some(default)) => expanded.push_str(&default),
            (None, None) => {
                expanded.push_str(&text[reference.span.clone()]);
                if !missing.contains(&reference.name) {
                    missing.push(reference.name);
                }
            }
        }
        copied = reference.span.end;
    }
    expanded.push_str(&text[copied..]);
    Expansion {
        text: expanded,
        missing,
    }
}

/// A variable-like form that Claude Code does not expand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnsupportedForm {
    /// The text as found, e.g. `$GITHUB_TOKEN` or `${env:GITHUB_TOKEN}`.
    pub found: String,
    /// Byte range of `found` in the text.
    pub span: Range<usize>,
    /// The variable it names, when it names one (`${input:…}` does not).
    pub name: Option<String>,
    /// What to write instead, e.g. ``use `${GITHUB_TOKEN}` ``.
    pub fix: String,
}

/// Every form in `text` that looks like a variable but that Claude Code
/// leaves literal: `$VAR`, `${VAR-x}`, `${VAR:=x}`, `${VAR:?e}`,
/// `${VAR:+x}`, `${ VAR }`, `${env:VAR}`, `${input:id}` and `{env:VAR}`.
///
/// Sorted by position. A valid `${VAR}` or `${VAR:-d}` is never reported,
/// though a `$VAR` inside a default is (the default is used literally).
/// `$` alone, `$5`, `$$` and `${1X}` (positional parameters of a shell
/// script in `args`) are not findings.
pub fn unsupported_forms(text: &str) -> Vec<UnsupportedForm> {
    if !may_hold_forms(text) {
        return Vec::new();
    }
    if text.len() > FORMS_MEMO_BYTES {
        return unsupported_forms_of(text);
    }
    FORMS_MEMO.with_borrow_mut(|memo| {
        if let Some(known) = memo.get(text) {
            return known.clone();
        }
        let found = unsupported_forms_of(text);
        if memo.len() < FORMS_MEMO_ENTRIES {
            memo.insert(text.into(), found.clone());
        }
        found
    })
}

/// Texts remembered per thread by [`unsupported_forms`], at most; later
/// ones are worked out each time (a hostile tree's million values cannot
/// grow it).
const FORMS_MEMO_ENTRIES: usize = 1 << 12;

/// Longest text remembered (with the entries above, at most 1 MiB of text
/// a thread); longer ones are worked out each time.
const FORMS_MEMO_BYTES: usize = 256;

type FormsMemo =
    std::collections::HashMap<Box<str>, Vec<UnsupportedForm>, foldhash::fast::RandomState>;

thread_local! {
    /// What [`unsupported_forms_of`] gave for each short text: a scan meets
    /// the same few placeholders (`${API_KEY}`, `Bearer ${TOKEN}`) in
    /// entry after entry, and each costs four regex passes.
    static FORMS_MEMO: std::cell::RefCell<FormsMemo> = std::cell::RefCell::default();
}

/// [`unsupported_forms`] worked out, never remembered: the reference the
/// remembered answers are tested against.
fn unsupported_forms_of(text: &str) -> Vec<UnsupportedForm> {
    if !may_hold_forms(text) {
        return Vec::new();
    }
    let valid: Vec<Range<usize>> = references(text).into_iter().map(|r| r.span).collect();
    let overlaps_valid = |span: &Range<usize>| {
        valid
            .iter()
            .any(|v| v.start < span.end && span.start < v.end)
    };
    let mut found: Vec<UnsupportedForm> = Vec::new();

    for captures in BRACED.captures_iter(text) {
        let (Some(whole), Some(inner)) = (captures.get(0), captures.get(1)) else {
            continue;
        };
        if overlaps_valid(&whole.range()) {
            continue;
        }
        if let Some((name, fix)) = classify_braced(inner.as_str()) {
            found.push(UnsupportedForm {
                found: whole.as_str().to_owned(),
                span: whole.range(),
                name,
                fix,
            });
        }
    }

    for captures in BARE.captures_iter(text) {
        let (Some(whole), Some(name)) = (captures.get(0), captures.get(1)) else {
            continue;
        };
        found.push(UnsupportedForm {
            found: whole.as_str().to_owned(),
            span: whole.range(),
            name: Some(name.as_str().to_owned()),
            fix: use_instead(&placeholder(name.as_str())),
        });
    }

    let before_env_braces = found.len();
    for captures in ENV_BRACES.captures_iter(text) {
        let (Some(whole), Some(name)) = (captures.get(0), captures.get(1)) else {
            continue;
        };
        let span = whole.range();
        // `${env:X}` was reported above as a whole; do not report its tail again.
        let inside_other = found[..before_env_braces]
            .iter()
            .any(|f| f.span.start < span.end && span.start < f.span.end);
        if inside_other || overlaps_valid(&span) {
            continue;
        }
        found.push(UnsupportedForm {
            found: whole.as_str().to_owned(),
            span,
            name: Some(name.as_str().to_owned()),
            fix: use_instead(&placeholder(name.as_str())),
        });
    }

    found.sort_by_key(|form| form.span.start);
    found
}

/// The indices in `args` of the arguments that are an interpreter's script
/// when a stdio server runs `command` with `args`: the argument right after
/// `-c` (also in a cluster such as `-lc`) for `sh`, `bash`, `zsh`, `dash`,
/// `ksh`, `fish` and `python`; after `-Command` (or an abbreviation, any
/// case) for `powershell` and `pwsh`; after `/c` or `/k` for `cmd`; after
/// `-e`/`--eval`/`-p`/`--print` for `node` and `bun`, `eval` for `deno`; after
/// `-e`/`-E` for `perl` and `ruby`, `-r` for `php`. `env` in front
/// (`env [-i] [NAME=value]... INTERPRETER …`) is looked through, and
/// `--eval=SCRIPT` counts as a script argument itself.
///
/// `$VAR` in such a script is the interpreter's business (a shell or
/// PowerShell variable): Claude Code leaves it alone, and rewriting it as
/// `${VAR}` would make Claude Code substitute its own value, or nothing.
pub fn script_arguments(command: &str, args: &[&str]) -> Vec<usize> {
    let mut offset = 0;
    let mut interpreter = program_name(command);
    if interpreter == "env" {
        let Some(position) = args
            .iter()
            .position(|arg| !arg.starts_with('-') && !arg.contains('='))
        else {
            return Vec::new();
        };
        interpreter = program_name(args[position]);
        offset = position + 1;
    }
    let rest = &args[offset.min(args.len())..];
    let is_flag: Box<dyn Fn(&str) -> bool> = match interpreter.as_str() {
        "sh" | "bash" | "zsh" | "dash" | "ksh" | "ash" | "fish" => {
            Box::new(|arg: &str| short_cluster_with(arg, 'c'))
        }
        name if is_python(name) => Box::new(|arg: &str| short_cluster_ending_with(arg, 'c')),
        "powershell" | "pwsh" => Box::new(|arg: &str| {
            let lower = arg.to_ascii_lowercase();
            let word = lower.trim_start_matches(['-', '/']);
            lower.len() > word.len() && !word.is_empty() && "command".starts_with(word)
        }),
        "cmd" => Box::new(|arg: &str| matches!(arg, "/c" | "/C" | "/k" | "/K")),
        "node" | "nodejs" | "bun" => {
            Box::new(|arg: &str| matches!(arg, "-e" | "--eval" | "-p" | "--print"))
        }
        "deno" => Box::new(|arg: &str| arg == "eval"),
        "perl" | "ruby" => Box::new(|arg: &str| matches!(arg, "-e" | "-E")),
        "php" => Box::new(|arg: &str| arg == "-r"),
        _ => return Vec::new(),
    };
    let mut scripts = Vec::new();
    for (index, arg) in rest.iter().enumerate() {
        if ["--eval=", "--print="]
            .iter()
            .any(|prefix| arg.starts_with(prefix))
            && matches!(interpreter.as_str(), "node" | "nodejs" | "bun")
        {
            scripts.push(offset + index);
        } else if is_flag(arg) && index + 1 < rest.len() {
            scripts.push(offset + index + 1);
        }
    }
    scripts
}

/// The program's name without directory, `.exe`-like extension or case
/// (`C:\\…\\PowerShell.EXE` → `powershell`).
fn program_name(command: &str) -> String {
    let name = command.rsplit(['/', '\\']).next().unwrap_or(command);
    let lower = name.to_ascii_lowercase();
    for extension in [".exe", ".cmd", ".bat", ".com"] {
        if let Some(stem) = lower.strip_suffix(extension) {
            return stem.to_string();
        }
    }
    lower
}

/// `python`, `python3`, `python3.12`, `py`, `pypy3`, …
fn is_python(name: &str) -> bool {
    ["python", "pypy"].iter().any(|stem| {
        name.strip_prefix(stem)
            .is_some_and(|version| version.chars().all(|c| c.is_ascii_digit() || c == '.'))
    }) || name == "py"
}

/// `-c`, `-lc`, `-ec`: one dash, letters, among them `letter`.
fn short_cluster_with(arg: &str, letter: char) -> bool {
    arg.strip_prefix('-').is_some_and(|cluster| {
        !cluster.is_empty()
            && cluster.chars().all(|c| c.is_ascii_alphabetic())
            && cluster.contains(letter)
    })
}

/// `-c`, `-Ic`: one dash, letters, the last one `letter` (it takes the
/// next argument).
fn short_cluster_ending_with(arg: &str, letter: char) -> bool {
    arg.strip_prefix('-').is_some_and(|cluster| {
        cluster.ends_with(letter) && cluster.chars().all(|c| c.is_ascii_alphabetic())
    })
}

/// Names the variable and the fix for the inside of an invalid `${…}`, or
/// `None` when it is not a form worth reporting (`${}`, `${1X}`, `${a.b}`).
fn classify_braced(inner: &str) -> Option<(Option<String>, String)> {
    if let Some(captures) = ENV_PREFIX.captures(inner) {
        let name = captures.get(1)?.as_str();
        return Some((Some(name.to_owned()), use_instead(&placeholder(name))));
    }
    if let Some(captures) = INPUT_PREFIX.captures(inner) {
        let suggested = variable_name_for(captures.get(1)?.as_str());
        return Some((None, use_instead(&placeholder(&suggested))));
    }
    if let Some(captures) = SPACED.captures(inner) {
        let name = captures.get(1)?.as_str();
        return Some((Some(name.to_owned()), use_instead(&placeholder(name))));
    }
    let captures = OPERATOR.captures(inner)?;
    let name = captures.get(1)?.as_str();
    let operand = captures.get(3)?.as_str();
    let replacement = match captures.get(2)?.as_str() {
        // Claude Code's only operator is `:-`, which also covers `-` and `:=`
        // as far as reading goes (nothing is ever assigned).
        ":-" | "-" | ":=" | "=" => format!("${{{name}:-{operand}}}"),
        _ => placeholder(name),
    };
    Some((Some(name.to_owned()), use_instead(&replacement)))
}

/// Upper-snake-cases an arbitrary id into a valid variable name.
fn variable_name_for(id: &str) -> String {
    let mut name: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    if !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        name.insert(0, '_');
    }
    name
}

/// The wording of every fix.
fn use_instead(replacement: &str) -> String {
    format!("use `{replacement}`")
}

/// A valid variable name made from any text: `my-server.v2` → `MY_SERVER_V2`,
/// `apiKey` → `API_KEY`, a leading digit gets `_`; `None` when nothing is left.
pub fn variable_name_from(text: &str) -> Option<String> {
    let mut out = String::new();
    let mut previous_lower = false;
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            if c.is_ascii_uppercase() && previous_lower {
                out.push('_');
            }
            previous_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
            out.push(c.to_ascii_uppercase());
        } else {
            previous_lower = false;
            if !out.is_empty() && !out.ends_with('_') {
                out.push('_');
            }
        }
    }
    let out = out.trim_end_matches('_').to_string();
    match out.chars().next() {
        None => None,
        Some(first) if first.is_ascii_digit() => Some(format!("_{out}")),
        Some(_) => Some(out),
    }
}

/// The placeholder for `name`: `${NAME}`.
pub fn placeholder(name: &str) -> String {
    format!("${{{name}}}")
}

/// Whether `name` is `[A-Za-z_][A-Za-z0-9_]*`: usable both in Claude Code's
/// `${…}` and as a dotenvy key.
pub fn is_variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether the whole of `text` is one or more references and nothing else,
/// e.g. `${A}` or `${A}${B:-x}`.
pub fn is_placeholder_only(text: &str) -> bool {
    let mut end = 0;
    for reference in references(text) {
        if reference.span.start != end {
            return false;
        }
        end = reference.span.end;
    }
    end > 0 && end == text.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |name| map.get(name).cloned()
    }

    fn expanded(text: &str, pairs: &[(&str, &str)]) -> (String, Vec<String>) {
        let expansion = expand(text, env(pairs));
        (expansion.text, expansion.missing)
    }

    fn strings(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| (*n).to_owned()).collect()
    }

    #[test]
    fn plain_reference_set_even_to_empty() {
        assert_eq!(expanded("${A}", &[("A", "v")]), ("v".into(), vec![]));
        assert_eq!(expanded("x${A}y", &[("A", "")]), ("xy".into(), vec![]));
    }

    #[test]
    fn plain_reference_unset_stays_literal_and_is_missing() {
        assert_eq!(
            expanded("${A}-${B}-${A}", &[]),
            ("${A}-${B}-${A}".into(), strings(&["A", "B"]))
        );
    }

    #[test]
    fn default_used_only_when_unset_and_empty_value_beats_it() {
        assert_eq!(expanded("${A:-d}", &[("A", "v")]), ("v".into(), vec![]));
        assert_eq!(expanded("${A:-d}", &[("A", "")]), (String::new(), vec![]));
        assert_eq!(expanded("${A:-d}", &[]), ("d".into(), vec![]));
        assert_eq!(expanded("<${A:-}>", &[]), ("<>".into(), vec![]));
        assert_eq!(expanded("${A:-x:-y}", &[]), ("x:-y".into(), vec![]));
    }

    #[test]
    fn default_ends_at_the_first_closing_brace() {
        assert_eq!(
            expanded("${A:-a}b}", &[("A", "<A>")]),
            ("<A>b}".into(), vec![])
        );
        assert_eq!(expanded("${A:-a}b}", &[]), ("ab}".into(), vec![]));
        let refs = references("${A:-${B}}");
        assert_eq!(refs.len(), 1);
        assert_eq!(refs[0].default.as_deref(), Some("${B"));
        assert_eq!(refs[0].span, 0..9);
    }

    #[test]
    fn nothing_escapes_a_reference() {
        assert_eq!(expanded("$${A}", &[("A", "<A>")]), ("$<A>".into(), vec![]));
        assert_eq!(
            expanded("\\${A}", &[("A", "<A>")]),
            ("\\<A>".into(), vec![])
        );
        assert_eq!(expanded("$${A}", &[]), ("$${A}".into(), strings(&["A"])));
        assert_eq!(expanded("\\${A}", &[]), ("\\${A}".into(), strings(&["A"])));
    }

    #[test]
    fn other_forms_are_never_expanded_nor_reported_missing() {
        for text in [
            "$VAR",
            "${VAR-x}",
            "${VAR:?e}",
            "${VAR:=x}",
            "${VAR:+x}",
            "${ VAR }",
            "${1X}",
            "${env:VAR}",
            "${input:x}",
            "{env:VAR}",
        ] {
            assert!(references(text).is_empty(), "{text}");
            assert_eq!(
                expanded(text, &[("VAR", "v"), ("X", "v"), ("x", "v")]),
                (text.to_owned(), vec![]),
                "{text}"
            );
        }
    }

    #[test]
    fn expansion_is_one_pass() {
        // The value is not expanded again, nor is a reference it forms with
        // the surrounding text.
        assert_eq!(expanded("${A}", &[("A", "${B}"), ("B", "no")]).0, "${B}");
        assert_eq!(expanded("${${A}}", &[("A", "B"), ("B", "no")]).0, "${B}");
    }

    #[test]
    fn references_report_names_defaults_and_spans() {
        let text = "a ${X} b ${Y_1:-d e} ${_z:-}";
        let refs = references(text);
        let summary: Vec<_> = refs
            .iter()
            .map(|r| (r.name.as_str(), r.default.as_deref(), &text[r.span.clone()]))
            .collect();
        assert_eq!(
            summary,
            [
                ("X", None, "${X}"),
                ("Y_1", Some("d e"), "${Y_1:-d e}"),
                ("_z", Some(""), "${_z:-}"),
            ]
        );
        // A default may span lines.
        assert_eq!(
            references("${A:-l1\nl2}")[0].default.as_deref(),
            Some("l1\nl2")
        );
    }

    fn one_form(text: &str) -> (String, Option<String>, String) {
        let found = unsupported_forms(text);
        assert_eq!(found.len(), 1, "{text}: {found:?}");
        let form = found.into_iter().next().unwrap_or_else(|| unreachable!());
        assert_eq!(&text[form.span.clone()], form.found);
        (form.found, form.name, form.fix)
    }

    fn finding(found: &str, name: Option<&str>, fix: &str) -> (String, Option<String>, String) {
        (found.to_owned(), name.map(str::to_owned), fix.to_owned())
    }

    #[test]
    fn each_unsupported_form_is_reported_with_a_fix() {
        let rows = [
            (
                "--token=$GITHUB_TOKEN",
                "$GITHUB_TOKEN",
                Some("GITHUB_TOKEN"),
                "use `${GITHUB_TOKEN}`",
            ),
            ("${VAR-x}", "${VAR-x}", Some("VAR"), "use `${VAR:-x}`"),
            ("${VAR:=x}", "${VAR:=x}", Some("VAR"), "use `${VAR:-x}`"),
            ("${VAR:?e}", "${VAR:?e}", Some("VAR"), "use `${VAR}`"),
            ("${VAR:+x}", "${VAR:+x}", Some("VAR"), "use `${VAR}`"),
            ("${ VAR }", "${ VAR }", Some("VAR"), "use `${VAR}`"),
            ("${ VAR:-d}", "${ VAR:-d}", Some("VAR"), "use `${VAR:-d}`"),
            (
                "Bearer ${env:API_KEY}",
                "${env:API_KEY}",
                Some("API_KEY"),
                "use `${API_KEY}`",
            ),
            (
                "${input:api-key}",
                "${input:api-key}",
                None,
                "use `${API_KEY}`",
            ),
            (
                "{env:API_KEY}",
                "{env:API_KEY}",
                Some("API_KEY"),
                "use `${API_KEY}`",
            ),
        ];
        for (text, found, name, fix) in rows {
            assert_eq!(one_form(text), finding(found, name, fix), "{text}");
        }
    }

    #[test]
    fn valid_references_and_plain_dollars_are_not_findings() {
        for text in [
            "${A}",
            "${A:-d}",
            "${A:-}",
            "${A:-x:-y}",
            "$${A}",
            "\\${A}",
            "$",
            "cost: $",
            "$5",
            "$$",
            "a $ b",
            "${1X}",
            "${}",
            "${A:-a}b}",
            "{env}",
        ] {
            assert_eq!(unsupported_forms(text), vec![], "{text}");
        }
    }

    #[test]
    fn findings_are_in_order_and_do_not_overlap_valid_references() {
        let text = "$A ${B} ${C-d} {env:E} ${env:F} ${G:-$H}";
        let found: Vec<String> = unsupported_forms(text)
            .into_iter()
            .map(|f| f.found)
            .collect();
        // `$H` inside a default is used literally by Claude Code, so it is
        // reported; the valid `${G:-$H}` itself is not.
        assert_eq!(found, ["$A", "${C-d}", "{env:E}", "${env:F}", "$H"]);
        // A valid reference starting inside a would-be form wins: nothing is
        // reported, as `${X-` is plain text to Claude Code.
        assert_eq!(unsupported_forms("${X-${A}}"), vec![]);
    }

    #[test]
    fn interpreter_scripts_are_found() {
        let rows: &[(&str, &[&str], &[usize])] = &[
            ("sh", &["-c", "echo $HOME"], &[1]),
            ("/bin/bash", &["-lc", "exec x", "arg0"], &[1]),
            ("zsh", &["-o", "pipefail", "-c", "x"], &[3]),
            (
                "powershell",
                &["-NoProfile", "-Command", "$roots = 1"],
                &[2],
            ),
            (
                "C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\PowerShell.EXE",
                &["-c", "x"],
                &[1],
            ),
            ("pwsh", &["-NonInteractive", "-com", "x"], &[2]),
            ("cmd", &["/c", "npx", "-y", "pkg"], &[1]),
            ("node", &["-e", "console.log(1)"], &[1]),
            ("node", &["--eval=x"], &[0]),
            ("python3.12", &["-Ic", "import os"], &[1]),
            ("py", &["-c", "x"], &[1]),
            ("/usr/bin/env", &["-i", "A=1", "bash", "-c", "x"], &[4]),
            ("deno", &["eval", "x"], &[1]),
            ("perl", &["-E", "say $x"], &[1]),
            // Not scripts: a flag last, other programs, a file to run.
            ("sh", &["-c"], &[]),
            ("sh", &["script.sh", "$X"], &[]),
            ("npx", &["-c", "x"], &[]),
            // A script's own `-e` counts too: fewer reports, never a wrong one.
            ("node", &["server.js", "-e", "x"], &[2]),
            ("powershell", &["-NonInteractive", "-File", "x.ps1"], &[]),
            ("python", &["-m", "server"], &[]),
        ];
        for (command, args, expected) in rows {
            assert_eq!(
                script_arguments(command, args),
                expected.to_vec(),
                "{command} {args:?}"
            );
        }
    }

    #[test]
    fn placeholder_and_names() {
        assert_eq!(placeholder("GITHUB_TOKEN"), "${GITHUB_TOKEN}");
        for good in ["A", "_", "a_1", "GITHUB_TOKEN"] {
            assert!(is_variable_name(good), "{good}");
        }
        for bad in ["", "1A", "a.b", "c-d", "é", "A B", "$A"] {
            assert!(!is_variable_name(bad), "{bad}");
        }
    }

    #[test]
    fn placeholder_only() {
        assert!(is_placeholder_only("${A}"));
        assert!(is_placeholder_only("${A}${B:-x}"));
        for text in ["", "x${A}", "${A}x", "${A} ${B}", "$A", "${A:-a}b}"] {
            assert!(!is_placeholder_only(text), "{text}");
        }
    }

    #[test]
    fn may_hold_forms_edges() {
        for (text, holds) in [
            ("", false),
            ("{", false),
            ("{env", false),
            ("{env:", true),
            ("{{env:", true),
            ("{en{env:X}", true),
            ("{ env:X}", false),
            ("a$", true),
            ("{x}{y}$", true),
            ("é{env:", true),
        ] {
            assert_eq!(may_hold_forms(text), holds, "{text:?}");
        }
    }

    #[test]
    fn the_forms_memo_is_bounded_and_long_texts_skip_it() {
        let long = format!("$A{}", "x".repeat(FORMS_MEMO_BYTES));
        assert_eq!(unsupported_forms(&long), unsupported_forms_of(&long));
        FORMS_MEMO.with_borrow(|memo| assert!(!memo.contains_key(long.as_str())));
        for index in 0..FORMS_MEMO_ENTRIES + 10 {
            let text = format!("$V{index}");
            assert_eq!(unsupported_forms(&text), unsupported_forms_of(&text));
        }
        FORMS_MEMO.with_borrow(|memo| assert_eq!(memo.len(), FORMS_MEMO_ENTRIES));
        let last = format!("$V{}", FORMS_MEMO_ENTRIES + 9);
        assert_eq!(unsupported_forms(&last).len(), 1);
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        /// A reference, with or without a default.
        fn reference() -> impl Strategy<Value = String> {
            prop_oneof![
                "[A-C]".prop_map(|name| format!("${{{name}}}")),
                ("[A-C]", "[a-z:$ {-]{0,4}").prop_map(|(name, d)| format!("${{{name}:-{d}}}")),
            ]
        }

        /// Text mixing references with fragments that come close to one.
        fn text(literal: &'static str) -> impl Strategy<Value = String> {
            let piece = prop_oneof![
                reference(),
                literal.prop_map(|s| s),
                prop::sample::select(vec!["$", "{", "}", "${", ":-", "$A", "${ A }", "é"])
                    .prop_map(str::to_owned),
            ];
            prop::collection::vec(piece, 0..10).prop_map(|pieces| pieces.concat())
        }

        /// References separated by text without `$` or braces.
        fn plain_text() -> impl Strategy<Value = String> {
            let piece = prop_oneof![reference(), "[a-z :é-]{0,5}"];
            prop::collection::vec(piece, 0..10).prop_map(|pieces| pieces.concat())
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(1000))]

            /// With every variable set, each reference becomes its value and
            /// nothing is missing.
            #[test]
            fn all_set_replaces_every_reference(
                text in text("[a-z ${}:-]{0,5}"),
                values in prop::collection::vec("[^${}]{0,4}", 3),
            ) {
                let lookup = |name: &str| Some(values[usize::from(name.as_bytes()[0]) % 3].clone());
                let expansion = expand(&text, lookup);
                prop_assert!(expansion.missing.is_empty());
                let mut spliced = String::new();
                let mut copied = 0;
                for r in references(&text) {
                    spliced.push_str(&text[copied..r.span.start]);
                    spliced.push_str(&lookup(&r.name).unwrap_or_default());
                    copied = r.span.end;
                }
                spliced.push_str(&text[copied..]);
                prop_assert_eq!(&expansion.text, &spliced);
            }

            /// Without `$` or braces in the surrounding text, no reference
            /// is left behind once every variable is set.
            #[test]
            fn all_set_leaves_no_reference(
                text in plain_text(),
                values in prop::collection::vec("[^${}]{0,4}", 3),
            ) {
                let lookup = |name: &str| Some(values[usize::from(name.as_bytes()[0]) % 3].clone());
                let expansion = expand(&text, lookup);
                prop_assert!(references(&expansion.text).is_empty(), "{:?}", expansion.text);
                prop_assert!(!expansion.text.contains("${"), "{:?}", expansion.text);
            }

            /// With nothing set, only references with a default change.
            #[test]
            fn none_set_changes_only_defaulted_references(text in text("[a-z ${}:-]{0,5}")) {
                let expansion = expand(&text, |_| None);
                let refs = references(&text);
                let mut expected = text.clone();
                for r in refs.iter().rev() {
                    if let Some(default) = &r.default {
                        expected.replace_range(r.span.clone(), default);
                    }
                }
                prop_assert_eq!(&expansion.text, &expected);
                let mut missing: Vec<String> = Vec::new();
                for r in refs.into_iter().filter(|r| r.default.is_none()) {
                    if !missing.contains(&r.name) {
                        missing.push(r.name);
                    }
                }
                prop_assert_eq!(expansion.missing, missing);
            }

            /// The one pass answers what looking for each form does.
            #[test]
            fn may_hold_forms_is_looking_for_each(
                text in text("[a-z ${}:vne-]{0,6}"),
            ) {
                let each = text.contains('$') || text.contains("{env:");
                prop_assert_eq!(may_hold_forms(&text), each);
            }

            /// A remembered answer is the one worked out, the first time
            /// and every time after.
            #[test]
            fn remembered_forms_are_the_worked_out_ones(
                texts in prop::collection::vec(text("[a-z ${}:-]{0,5}"), 1..6),
            ) {
                for text in texts.iter().chain(&texts) {
                    prop_assert_eq!(unsupported_forms(text), unsupported_forms_of(text));
                }
            }

            /// Valid references are never reported as unsupported forms.
            #[test]
            fn findings_never_overlap_a_reference(text in text("[a-z ${}:-]{0,5}")) {
                let refs = references(&text);
                for form in unsupported_forms(&text) {
                    prop_assert_eq!(&text[form.span.clone()], form.found.as_str());
                    for r in &refs {
                        let default = r.span.end - 1 - r.default.as_ref().map_or(0, String::len)..r.span.end - 1;
                        let overlaps = r.span.start < form.span.end && form.span.start < r.span.end;
                        let in_default = default.start <= form.span.start && form.span.end <= default.end;
                        prop_assert!(!overlaps || in_default, "{:?} vs {:?}", form, r);
                    }
                }
            }
        }
    }
}
