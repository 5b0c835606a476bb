//! The shipped templates (`templates/*.json`) and a real published
//! `server.json` (`tests/fixtures/`) against the MCP Registry's own JSON
//! Schema (2025-12-11, vendored in `tests/schema/`), plus what mcpenv asks of
//! a template beyond the schema.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

const SCHEMA_URL: &str =
    "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";
const META_KEY: &str = "dev.mcpenv/template";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read_json(path: &Path) -> Value {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    serde_json::from_str(&text)
        .unwrap_or_else(|error| panic!("{}: not JSON: {error}", path.display()))
}

/// Every `templates/*.json`, sorted by name.
fn template_files() -> Vec<PathBuf> {
    let dir = root().join("templates");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    files
}

fn validator() -> jsonschema::Validator {
    let schema = read_json(&root().join("tests/schema/server.schema.2025-12-11.json"));
    assert_eq!(
        schema["$id"], SCHEMA_URL,
        "the vendored schema is not the 2025-12-11 one"
    );
    jsonschema::draft7::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the vendored schema compiles as draft-07")
}

fn relative(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

#[test]
fn every_template_and_the_fixture_validate_against_the_registry_schema() {
    let validator = validator();
    let mut files = template_files();
    assert!(
        files.len() >= 15,
        "expected at least 15 templates, found {}",
        files.len()
    );
    files.push(root().join("tests/fixtures/context7.server.json"));
    let mut report = String::new();
    for path in &files {
        let instance = read_json(path);
        let errors: Vec<String> = validator
            .iter_errors(&instance)
            .map(|error| format!("  at `{}`: {error}", error.instance_path()))
            .collect();
        if !errors.is_empty() {
            let _ = writeln!(report, "{}:\n{}", relative(path), errors.join("\n"));
        }
    }
    assert!(
        report.is_empty(),
        "files that fail the 2025-12-11 schema:\n{report}"
    );
}

/// The schema is not vacuous: a file that breaks it is reported.
#[test]
fn the_schema_rejects_what_the_registry_rejects() {
    let validator = validator();
    let bad = serde_json::json!({
        "name": "no-slash",
        "description": "",
        "version": "1.0.0",
        "packages": [{"registryType": "npm", "identifier": "x", "version": "latest", "transport": {"type": "stdio"}}],
        "remotes": [{"type": "streamable-http", "url": "not a url"}]
    });
    let paths: BTreeSet<String> = validator
        .iter_errors(&bad)
        .map(|error| error.instance_path().to_string())
        .collect();
    for expected in ["/name", "/description", "/packages/0/version", "/remotes/0"] {
        assert!(
            paths.contains(expected),
            "no error at {expected}: {paths:?}"
        );
    }
}

/// A problem found in one template, for the report.
struct Problems {
    file: String,
    found: Vec<String>,
}

impl Problems {
    fn add(&mut self, problem: String) {
        self.found.push(problem);
    }
}

/// `{name}` references in a `value` or URL template.
fn references(text: &str) -> Vec<String> {
    let pattern = regex::Regex::new(r"\{([^{}]+)\}").expect("a valid pattern");
    pattern
        .captures_iter(text)
        .map(|captures| captures[1].to_string())
        .collect()
}

fn object_keys(value: &Value) -> Vec<String> {
    value
        .as_object()
        .map(|map| map.keys().cloned().collect())
        .unwrap_or_default()
}

/// An input (env var, header, argument or variable) must say what it is,
/// whether it is secret and whether it is required.
fn check_input(problems: &mut Problems, at: &str, input: &Value) {
    if input
        .get("description")
        .and_then(Value::as_str)
        .is_none_or(|text| text.trim().is_empty())
    {
        problems.add(format!("{at}: no `description`"));
    }
    for key in ["isSecret", "isRequired"] {
        if !input.get(key).is_some_and(Value::is_boolean) {
            problems.add(format!("{at}: no boolean `{key}`"));
        }
    }
    if let (Some(default), Some(choices)) = (
        input.get("default").and_then(Value::as_str),
        input.get("choices").and_then(Value::as_array),
    ) && !choices.iter().any(|choice| choice == default)
    {
        problems.add(format!(
            "{at}: default `{default}` is not one of its choices"
        ));
    }
}

/// Checks the `{name}` references of `text` against `variables`, then each
/// variable; returns the variable names.
fn check_variables(problems: &mut Problems, at: &str, text: &str, holder: &Value) -> Vec<String> {
    let variables = holder.get("variables").cloned().unwrap_or(Value::Null);
    let declared = object_keys(&variables);
    for name in references(text) {
        if !declared.contains(&name) {
            problems.add(format!("{at}: `{{{name}}}` is not declared in `variables`"));
        }
    }
    for name in &declared {
        check_input(
            problems,
            &format!("{at}.variables.{name}"),
            &variables[name],
        );
    }
    declared
}

fn is_exact_version(version: &str) -> bool {
    !version.is_empty()
        && version != "latest"
        && !version.starts_with(['^', '~', '>', '<', '='])
        && !version.contains(['*', ' ', '|'])
        && !version.split('.').any(|part| part == "x" || part == "X")
}

/// Checks one template; returns every name its `_meta` may refer to.
fn check_template(problems: &mut Problems, template: &Value) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    if template["$schema"] != SCHEMA_URL {
        problems.add(format!("`$schema` is not {SCHEMA_URL}"));
    }
    for key in ["name", "description", "version"] {
        if template
            .get(key)
            .and_then(Value::as_str)
            .is_none_or(|text| text.trim().is_empty())
        {
            problems.add(format!("no `{key}`"));
        }
    }
    if template
        .get("version")
        .and_then(Value::as_str)
        .is_some_and(|version| !is_exact_version(version))
    {
        problems.add(format!(
            "`version` {} is not an exact version",
            template["version"]
        ));
    }
    let packages = template
        .get("packages")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let remotes = template
        .get("remotes")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if packages.is_empty() && remotes.is_empty() {
        problems.add("neither a package nor a remote".to_string());
    }
    for (index, package) in packages.iter().enumerate() {
        let at = format!("packages[{index}]");
        let identifier = package["identifier"].as_str().unwrap_or_default();
        match (
            package["registryType"].as_str(),
            package.get("version").and_then(Value::as_str),
        ) {
            (Some("oci"), Some(_)) => problems.add(format!(
                "{at}: an oci image keeps its tag in `identifier`, not `version`"
            )),
            (Some("oci"), None)
                if !identifier
                    .rsplit('/')
                    .next()
                    .unwrap_or_default()
                    .contains(':') =>
            {
                problems.add(format!("{at}: oci image `{identifier}` has no tag"));
            }
            (Some("oci"), None) => {}
            (_, Some(version)) if !is_exact_version(version) => {
                problems.add(format!("{at}: version `{version}` is not exact"));
            }
            (_, Some(_)) => {}
            (_, None) => problems.add(format!("{at}: no exact `version`")),
        }
        for list in ["runtimeArguments", "packageArguments"] {
            for (position, argument) in package
                .get(list)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                let at = format!("{at}.{list}[{position}]");
                if let Some(label) = argument.get("valueHint").and_then(Value::as_str) {
                    names.insert(label.to_string());
                }
                if let Some(flag) = argument.get("name").and_then(Value::as_str) {
                    names.insert(flag.trim_start_matches('-').to_string());
                }
                // A bare fixed flag (`--read-only`) has nothing to describe.
                let fixed_flag = argument.get("value").is_none()
                    && argument.get("description").is_none()
                    && argument.get("default").is_none()
                    && argument.get("isRequired").is_none();
                if !fixed_flag {
                    check_input(problems, &at, argument);
                }
                let value = argument
                    .get("value")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                names.extend(check_variables(problems, &at, value, argument));
            }
        }
        for (position, variable) in package
            .get("environmentVariables")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let name = variable["name"].as_str().unwrap_or_default();
            let at = format!("{at}.environmentVariables[{position}] `{name}`");
            check_input(problems, &at, variable);
            names.insert(name.to_string());
            let value = variable
                .get("value")
                .and_then(Value::as_str)
                .unwrap_or_default();
            names.extend(check_variables(problems, &at, value, variable));
        }
    }
    for (index, remote) in remotes.iter().enumerate() {
        let at = format!("remotes[{index}]");
        let url = remote["url"].as_str().unwrap_or_default();
        if !url.starts_with("https://") {
            problems.add(format!("{at}: `{url}` is not https"));
        }
        names.extend(check_variables(problems, &at, url, remote));
        for (position, header) in remote
            .get("headers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let name = header["name"].as_str().unwrap_or_default();
            let at = format!("{at}.headers[{position}] `{name}`");
            check_input(problems, &at, header);
            names.insert(name.to_string());
            let value = header
                .get("value")
                .and_then(Value::as_str)
                .unwrap_or_default();
            names.extend(check_variables(problems, &at, value, header));
        }
    }
    names
}

/// `_meta."dev.mcpenv/template"`: only known keys, each variable naming a
/// declared input, each pattern a valid `regex`.
fn check_meta(problems: &mut Problems, template: &Value, names: &BTreeSet<String>) {
    let Some(meta) = template.get("_meta").and_then(|meta| meta.get(META_KEY)) else {
        return;
    };
    for key in object_keys(meta) {
        if !["variables", "notes"].contains(&key.as_str()) {
            problems.add(format!("_meta: unknown key `{key}`"));
        }
    }
    if meta.get("notes").is_some_and(|notes| !notes.is_string()) {
        problems.add("_meta: `notes` is not a string".to_string());
    }
    let Some(variables) = meta.get("variables") else {
        return;
    };
    let Some(variables) = variables.as_object() else {
        problems.add("_meta: `variables` is not an object".to_string());
        return;
    };
    for (name, entry) in variables {
        if !names.contains(name) {
            problems.add(format!(
                "_meta.variables.{name}: names no env var, header, argument or variable (declared: {})",
                names.iter().cloned().collect::<Vec<_>>().join(", ")
            ));
        }
        for key in object_keys(entry) {
            if !["howToGet", "pattern", "example"].contains(&key.as_str()) {
                problems.add(format!("_meta.variables.{name}: unknown key `{key}`"));
            } else if !entry[&key].is_string() {
                problems.add(format!("_meta.variables.{name}.{key}: not a string"));
            }
        }
        if let Some(pattern) = entry.get("pattern").and_then(Value::as_str) {
            match regex::Regex::new(pattern) {
                Ok(compiled) => {
                    if let Some(example) = entry.get("example").and_then(Value::as_str)
                        && !compiled.is_match(example)
                    {
                        problems.add(format!(
                            "_meta.variables.{name}: example `{example}` does not match `{pattern}`"
                        ));
                    }
                }
                Err(error) => problems.add(format!("_meta.variables.{name}.pattern: {error}")),
            }
        }
    }
}

#[test]
fn every_template_declares_what_mcpenv_needs() {
    let file_name = regex::Regex::new(r"^[a-z0-9]+(-[a-z0-9]+)*\.json$").expect("a valid pattern");
    let mut report = String::new();
    for path in template_files() {
        let mut problems = Problems {
            file: relative(&path),
            found: Vec::new(),
        };
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        if !file_name.is_match(&name) {
            problems.add(format!("file name `{name}` is not lowercase-with-dashes"));
        }
        let template = read_json(&path);
        let names = check_template(&mut problems, &template);
        check_meta(&mut problems, &template, &names);
        if !problems.found.is_empty() {
            let _ = writeln!(
                report,
                "{}:\n  {}",
                problems.file,
                problems.found.join("\n  ")
            );
        }
    }
    assert!(
        report.is_empty(),
        "templates that miss what mcpenv needs:\n{report}"
    );
}

/// The checks above do catch the mistakes they are for.
#[test]
fn the_template_checks_catch_mistakes() {
    let template = serde_json::json!({
        "$schema": SCHEMA_URL,
        "name": "dev.mcpenv/broken",
        "description": "Broken on purpose",
        "version": "^1.0",
        "packages": [{
            "registryType": "oci", "identifier": "ghcr.io/acme/server", "transport": {"type": "stdio"},
            "environmentVariables": [{"name": "TOKEN", "isSecret": true}]
        }],
        "remotes": [{
            "type": "streamable-http", "url": "https://{tenant}.example.com/mcp",
            "headers": [{"name": "Authorization", "description": "d", "isSecret": true, "isRequired": true, "value": "Bearer {key}"}]
        }],
        "_meta": {"dev.mcpenv/template": {"variables": {
            "NOPE": {"howToGet": "x"},
            "TOKEN": {"pattern": "(unclosed", "hint": "x"}
        }}}
    });
    let mut problems = Problems {
        file: "broken.json".into(),
        found: Vec::new(),
    };
    let names = check_template(&mut problems, &template);
    check_meta(&mut problems, &template, &names);
    let found = problems.found.join("\n");
    for expected in [
        "`version` \"^1.0\" is not an exact version",
        "packages[0]: oci image `ghcr.io/acme/server` has no tag",
        "packages[0].environmentVariables[0] `TOKEN`: no `description`",
        "packages[0].environmentVariables[0] `TOKEN`: no boolean `isRequired`",
        "remotes[0]: `{tenant}` is not declared in `variables`",
        "remotes[0].headers[0] `Authorization`: `{key}` is not declared in `variables`",
        "_meta.variables.NOPE: names no env var",
        "_meta.variables.TOKEN: unknown key `hint`",
        "_meta.variables.TOKEN.pattern: regex parse error",
    ] {
        assert!(
            found.contains(expected),
            "missing `{expected}` in:\n{found}"
        );
    }
}
