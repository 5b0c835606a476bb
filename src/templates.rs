//! Server templates in the MCP Registry's `server.json` format: finding
//! them (project, user, embedded, or any file), and rendering one into a
//! Claude Code entry whose every variable and secret is a `${VAR}`
//! placeholder, never a value.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use include_dir::{Dir, include_dir};
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::config::claude_code::blanked;
use crate::config::model::ServerEntry;

/// The templates shipped in the binary (`templates/*.json`).
static EMBEDDED: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/templates");

/// Our key under `_meta` for what `server.json` has no field for.
pub const META_KEY: &str = "dev.mcpenv/template";

/// Where a template was found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase", tag = "kind", content = "path")]
pub enum Origin {
    /// Shipped in the binary.
    Embedded,
    /// The user's templates folder.
    User(PathBuf),
    /// The project's `.mcpenv/templates/`.
    Project(PathBuf),
    /// A file named on the command line.
    File(PathBuf),
}

/// A parsed template.
#[derive(Debug, Clone)]
pub struct Template {
    /// The name it is looked up by (the file name without `.json`).
    pub name: String,
    /// Where it came from.
    pub origin: Origin,
    /// Its content.
    pub server: ServerJson,
}

/// The parts of `server.json` mcpenv uses; unknown keys are ignored, as
/// the registry's schema allows them.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerJson {
    /// `namespace/name`.
    pub name: String,
    /// One line about the server.
    pub description: String,
    /// The server's version.
    pub version: String,
    /// A display name.
    #[serde(default)]
    pub title: Option<String>,
    /// Where to read more.
    #[serde(default)]
    pub website_url: Option<String>,
    /// Installable packages.
    #[serde(default)]
    pub packages: Vec<Package>,
    /// Hosted endpoints.
    #[serde(default)]
    pub remotes: Vec<Remote>,
    /// Extension data; ours is under [`META_KEY`].
    #[serde(default, rename = "_meta")]
    pub meta: Option<Value>,
}

/// An installable package.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Package {
    /// `npm`, `pypi`, `oci`, `nuget`, `mcpb`, `cargo`.
    pub registry_type: String,
    /// The package name or image.
    pub identifier: String,
    /// The exact version.
    #[serde(default)]
    pub version: Option<String>,
    /// A non-default registry.
    #[serde(default)]
    pub registry_base_url: Option<String>,
    /// How the client talks to it once started.
    pub transport: PackageTransport,
    /// Arguments for the runner (`docker`, `npx`).
    #[serde(default)]
    pub runtime_arguments: Vec<Argument>,
    /// Arguments for the server itself.
    #[serde(default)]
    pub package_arguments: Vec<Argument>,
    /// Environment variables.
    #[serde(default)]
    pub environment_variables: Vec<KeyValueInput>,
}

/// A package's transport.
#[derive(Debug, Clone, Deserialize)]
pub struct PackageTransport {
    /// `stdio`, `streamable-http` or `sse`.
    #[serde(rename = "type")]
    pub kind: String,
}

/// A command-line argument.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Argument {
    /// `positional` or `named`.
    #[serde(rename = "type")]
    pub kind: String,
    /// For named arguments: the flag, dashes included.
    #[serde(default)]
    pub name: Option<String>,
    /// For positional arguments: a label for the value.
    #[serde(default)]
    pub value_hint: Option<String>,
    /// Its input.
    #[serde(flatten)]
    pub input: Input,
}

/// An environment variable or header.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyValueInput {
    /// The variable or header name.
    pub name: String,
    /// Its input.
    #[serde(flatten)]
    pub input: Input,
}

/// What a user may or must provide.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Input {
    /// Shown to the user.
    #[serde(default)]
    pub description: Option<String>,
    /// Whether a value is needed.
    #[serde(default)]
    pub is_required: bool,
    /// Whether the value is a secret.
    #[serde(default)]
    pub is_secret: bool,
    /// A fixed value; `{name}` parts come from `variables`.
    #[serde(default)]
    pub value: Option<String>,
    /// The value used when none is given.
    #[serde(default)]
    pub default: Option<String>,
    /// Inputs filling `{name}` in `value`.
    #[serde(default)]
    pub variables: IndexMap<String, Self>,
}

/// A hosted endpoint.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Remote {
    /// `streamable-http` or `sse`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Its URL; `{name}` parts come from `variables`.
    pub url: String,
    /// Headers to send.
    #[serde(default)]
    pub headers: Vec<KeyValueInput>,
    /// Inputs filling `{name}` in the URL.
    #[serde(default)]
    pub variables: IndexMap<String, Input>,
}

/// A template that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TemplateError {
    /// The file could not be read.
    #[error("cannot read template `{}`", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a valid `server.json`.
    #[error("template `{}` is malformed at `{field}`: {message}", path.display())]
    Malformed {
        /// The file (or `embedded:<name>`).
        path: PathBuf,
        /// The JSON path of the offending field (`.` for the whole file).
        field: String,
        /// What is wrong.
        message: String,
    },
    /// No template of that name.
    #[error("no template named `{0}`")]
    NotFound(String),
    /// `--package N` / `--remote N` out of range.
    #[error("template `{name}` has no {what} {index} (it has {count})")]
    NoSuchChoice {
        /// The template.
        name: String,
        /// `package` or `remote`.
        what: &'static str,
        /// The index asked for (1-based).
        index: usize,
        /// How many there are.
        count: usize,
    },
    /// A package mcpenv cannot turn into an entry.
    #[error("template `{name}`: {reason}")]
    Unsupported {
        /// The template.
        name: String,
        /// Why.
        reason: String,
    },
}

/// Parses `text` as a template from `path`, naming the field that is wrong.
pub fn parse(
    name: &str,
    origin: Origin,
    path: &Path,
    text: &str,
) -> Result<Template, TemplateError> {
    let malformed = |field: String, message: String| TemplateError::Malformed {
        path: path.to_path_buf(),
        field,
        message,
    };
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let server: ServerJson =
        serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
            let field = error.path().to_string();
            let inner = error.into_inner();
            let message = inner.to_string();
            let message = message
                .rfind(" at line ")
                .map_or(message.clone(), |cut| message[..cut].to_string());
            malformed(field, message)
        })?;
    if server.packages.is_empty() && server.remotes.is_empty() {
        return Err(malformed(
            ".".into(),
            "it has neither `packages` nor `remotes`".into(),
        ));
    }
    Ok(Template {
        name: name.to_string(),
        origin,
        server,
    })
}

/// Where templates are looked for: the project's, then the user's folder.
#[derive(Debug, Clone)]
pub struct TemplateDirs {
    /// `.mcpenv/templates/` of the project.
    pub project: PathBuf,
    /// The user's templates folder.
    pub user: Option<PathBuf>,
}

/// Finds template `name`: a path to any `server.json` file, else the
/// project's, the user's, or the embedded template of that name (in that
/// order: nearer ones override).
pub fn find(dirs: &TemplateDirs, name: &str) -> Result<Template, TemplateError> {
    let as_path = Path::new(name);
    if name.contains('/') || name.ends_with(".json") {
        return read_file(
            name_of(as_path),
            Origin::File(as_path.to_path_buf()),
            as_path,
        );
    }
    for (dir, origin) in [
        (
            Some(&dirs.project),
            Origin::Project as fn(PathBuf) -> Origin,
        ),
        (dirs.user.as_ref(), Origin::User),
    ] {
        let Some(dir) = dir else { continue };
        let path = dir.join(format!("{name}.json"));
        if path.is_file() {
            return read_file(name.to_string(), origin(path.clone()), &path);
        }
    }
    embedded(name).ok_or_else(|| TemplateError::NotFound(name.to_string()))?
}

/// Every template by name, nearer ones overriding embedded ones, with the
/// errors of the ones that could not be read.
pub fn all(dirs: &TemplateDirs) -> (Vec<Template>, Vec<TemplateError>) {
    let mut found: BTreeMap<String, Template> = BTreeMap::new();
    let mut errors = Vec::new();
    for file in EMBEDDED.files() {
        let Some(name) = json_stem(file.path()) else {
            continue;
        };
        match embedded(&name) {
            Some(Ok(template)) => {
                found.insert(name, template);
            }
            Some(Err(error)) => errors.push(error),
            None => {}
        }
    }
    for (dir, origin) in [
        (dirs.user.as_ref(), Origin::User as fn(PathBuf) -> Origin),
        (Some(&dirs.project), Origin::Project),
    ] {
        let Some(dir) = dir else { continue };
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|entry| entry.ok().map(|entry| entry.path()))
            .collect();
        paths.sort();
        for path in paths {
            let Some(name) = json_stem(&path) else {
                continue;
            };
            match read_file(name.clone(), origin(path.clone()), &path) {
                Ok(template) => {
                    found.insert(name, template);
                }
                Err(error) => errors.push(error),
            }
        }
    }
    (found.into_values().collect(), errors)
}

fn json_stem(path: &Path) -> Option<String> {
    (path.extension()? == "json").then(|| path.file_stem()?.to_str().map(str::to_string))?
}

fn name_of(path: &Path) -> String {
    let stem = path
        .file_stem()
        .and_then(|stem| stem.to_str())
        .unwrap_or("template");
    stem.trim_end_matches(".server").to_string()
}

fn embedded(name: &str) -> Option<Result<Template, TemplateError>> {
    let file = EMBEDDED.get_file(format!("{name}.json"))?;
    let text = file.contents_utf8().unwrap_or_default();
    let path = PathBuf::from(format!("embedded:templates/{name}.json"));
    Some(parse(name, Origin::Embedded, &path, text))
}

fn read_file(name: String, origin: Origin, path: &Path) -> Result<Template, TemplateError> {
    let text = crate::mechanics::fsx::read_if_exists(path)
        .and_then(|text| text.ok_or_else(|| std::io::ErrorKind::NotFound.into()))
        .map_err(|source| TemplateError::Read {
            path: path.to_path_buf(),
            source,
        })?;
    parse(&name, origin, path, &text)
}

/// Which part of a template to render.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// The first package, else the first remote.
    Default,
    /// Package N (1-based).
    Package(usize),
    /// Remote N (1-based).
    Remote(usize),
}

/// A variable the rendered entry references, with what the template says
/// about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TemplateVariable {
    /// The variable (`${NAME}`).
    pub name: String,
    /// What it is for.
    pub description: Option<String>,
    /// Whether its value is a secret.
    pub secret: bool,
    /// Whether the server needs it.
    pub required: bool,
    /// Its default, if any.
    pub default: Option<String>,
    /// Where to get a value (`_meta`).
    pub how_to_get: Option<String>,
    /// A regular expression a valid value matches (`_meta`).
    pub pattern: Option<String>,
}

/// A template rendered into an entry.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// The entry, in Claude Code's shape.
    pub entry: Value,
    /// Every variable it references.
    pub variables: Vec<TemplateVariable>,
}

/// Renders `choice` of `template` as server `server`: placeholders for
/// every variable and secret, named after env vars, or `SERVER_WHAT`.
pub fn render(
    template: &Template,
    choice: Choice,
    server: &str,
) -> Result<Rendered, TemplateError> {
    let spec = &template.server;
    let no_such = |what, index, count| TemplateError::NoSuchChoice {
        name: template.name.clone(),
        what,
        index,
        count,
    };
    let mut context = Context {
        prefix: screaming_snake(server),
        meta: spec
            .meta
            .as_ref()
            .and_then(|meta| meta.get(META_KEY))
            .and_then(|meta| meta.get("variables"))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default(),
        variables: Vec::new(),
        remote: false,
    };
    let entry = match choice {
        Choice::Package(index) => {
            let package = spec
                .packages
                .get(index.wrapping_sub(1))
                .ok_or_else(|| no_such("package", index, spec.packages.len()))?;
            context.package(template, package)?
        }
        Choice::Remote(index) => {
            let remote = spec
                .remotes
                .get(index.wrapping_sub(1))
                .ok_or_else(|| no_such("remote", index, spec.remotes.len()))?;
            context.remote(remote)
        }
        Choice::Default => match (spec.packages.first(), spec.remotes.first()) {
            (Some(package), _) => context.package(template, package)?,
            (None, Some(remote)) => context.remote(remote),
            (None, None) => return Err(no_such("package", 1, 0)),
        },
    };
    Ok(Rendered {
        entry,
        variables: context.variables,
    })
}

struct Context {
    prefix: String,
    meta: Map<String, Value>,
    variables: Vec<TemplateVariable>,
    /// Rendering a remote: names Claude Code sends empty to remote servers
    /// (`NPM_TOKEN`, …) are replaced.
    remote: bool,
}

impl Context {
    fn package(&mut self, template: &Template, package: &Package) -> Result<Value, TemplateError> {
        let unsupported = |reason: String| TemplateError::Unsupported {
            name: template.name.clone(),
            reason,
        };
        if package.transport.kind != "stdio" {
            return Err(unsupported(format!(
                "package `{}` serves {} on its own; start it yourself and add its URL, or pick a remote with `--remote N`",
                package.identifier, package.transport.kind
            )));
        }
        let versioned = match &package.version {
            Some(version) => format!("{}@{version}", package.identifier),
            None => package.identifier.clone(),
        };
        let runtime = self.arguments(&package.runtime_arguments);
        let arguments = self.arguments(&package.package_arguments);
        let mut env = Map::new();
        let mut names = Vec::new();
        for variable in &package.environment_variables {
            names.push(variable.name.clone());
            if let Some(value) = self.env_value(variable) {
                env.insert(variable.name.clone(), Value::String(value));
            }
        }
        let base = package.registry_base_url.as_deref();
        let (command, mut args): (&str, Vec<String>) = match package.registry_type.as_str() {
            "npm" => {
                let mut args = vec!["-y".to_string()];
                args.extend(runtime);
                if let Some(base) =
                    base.filter(|base| !base.starts_with("https://registry.npmjs.org"))
                {
                    args.extend(["--registry".to_string(), base.to_string()]);
                }
                args.push(versioned);
                ("npx", args)
            }
            "pypi" => {
                let mut args = runtime;
                if let Some(base) = base.filter(|base| !base.starts_with("https://pypi.org")) {
                    args.extend(["--index-url".to_string(), base.to_string()]);
                }
                args.push(versioned);
                ("uvx", args)
            }
            "oci" => {
                let mut args = vec!["run".to_string(), "-i".to_string(), "--rm".to_string()];
                args.extend(runtime);
                // Values reach docker through its own environment (`env`),
                // never through argv; `-e NAME` forwards optional ones too
                // when they are set.
                for name in &names {
                    args.extend(["-e".to_string(), name.clone()]);
                }
                let image = match &package.version {
                    Some(version) if !package.identifier.contains(':') => {
                        format!("{}:{version}", package.identifier)
                    }
                    _ => package.identifier.clone(),
                };
                args.push(image);
                ("docker", args)
            }
            "nuget" => {
                let mut args = runtime;
                args.extend([versioned, "--yes".to_string()]);
                if let Some(base) = base {
                    args.extend(["--source".to_string(), base.to_string()]);
                }
                if !arguments.is_empty() {
                    args.push("--".to_string());
                }
                ("dnx", args)
            }
            other => {
                return Err(unsupported(format!(
                    "`{other}` packages cannot be written as a command line; pick a remote with `--remote N`"
                )));
            }
        };
        args.extend(arguments);
        Ok(json!({"type": "stdio", "command": command, "args": args, "env": env}))
    }

    fn remote(&mut self, remote: &Remote) -> Value {
        self.remote = true;
        let entry = self.remote_entry(remote);
        self.remote = false;
        entry
    }

    /// A variable name as the entry uses it: for a remote, never one Claude
    /// Code blanks there.
    fn name(&self, name: String) -> String {
        if self.remote {
            blanked::remote_safe_name(&name, &self.prefix)
        } else {
            name
        }
    }

    fn remote_entry(&mut self, remote: &Remote) -> Value {
        let url = self.fill(&remote.url, &remote.variables);
        let mut headers = Map::new();
        for header in &remote.headers {
            let value = match &header.input.value {
                // A header built from optional inputs nobody set is not sent.
                Some(_)
                    if header
                        .input
                        .variables
                        .values()
                        .any(|input| !input.is_required && input.default.is_none()) =>
                {
                    None
                }
                Some(value) => Some(self.fill(value, &header.input.variables)),
                None => {
                    let stripped = header
                        .name
                        .strip_prefix("X-")
                        .or_else(|| header.name.strip_prefix("x-"))
                        .unwrap_or(&header.name);
                    let name = self.name(format!("{}_{}", self.prefix, screaming_snake(stripped)));
                    self.placeholder(&name, &header.name, &header.input)
                }
            };
            if let Some(value) = value {
                headers.insert(header.name.clone(), Value::String(value));
            }
        }
        let transport = if remote.kind == "sse" { "sse" } else { "http" };
        let mut entry = Map::new();
        entry.insert("type".into(), Value::from(transport));
        entry.insert("url".into(), Value::String(url));
        if !headers.is_empty() {
            entry.insert("headers".into(), Value::Object(headers));
        }
        Value::Object(entry)
    }

    fn arguments(&mut self, arguments: &[Argument]) -> Vec<String> {
        let mut out = Vec::new();
        for argument in arguments {
            let label = argument
                .name
                .as_deref()
                .map(|name| name.trim_start_matches('-').to_string())
                .or_else(|| argument.value_hint.clone())
                .unwrap_or_else(|| "ARG".to_string());
            let value = match &argument.input.value {
                Some(value) => Some(self.fill(value, &argument.input.variables)),
                None if argument.kind == "named"
                    && argument.input.description.is_none()
                    && argument.input.default.is_none()
                    && !argument.input.is_required =>
                {
                    None
                }
                None => {
                    let name = format!("{}_{}", self.prefix, screaming_snake(&label));
                    match self.placeholder(&name, &label, &argument.input) {
                        Some(value) => Some(value),
                        // An optional argument nobody set is left out whole.
                        None => continue,
                    }
                }
            };
            if argument.kind == "named"
                && let Some(flag) = &argument.name
            {
                out.push(flag.clone());
            }
            out.extend(value);
        }
        out
    }

    /// An env var's entry value: fixed values kept (with `{v}` filled);
    /// secrets and required ones as `${NAME}`; a default as
    /// `${NAME:-default}`; optional ones without a default left out.
    fn env_value(&mut self, variable: &KeyValueInput) -> Option<String> {
        match &variable.input.value {
            Some(value) => Some(self.fill(value, &variable.input.variables)),
            None => self.placeholder(&variable.name.clone(), &variable.name, &variable.input),
        }
    }

    /// `${NAME}` or `${NAME:-default}` for an input, recording the
    /// variable; `None` when it is optional without a default.
    fn placeholder(&mut self, name: &str, meta_key: &str, input: &Input) -> Option<String> {
        // An unset `${VAR}` reaches the server as literal text, so optional
        // inputs without a default (secret or not) are left out: env vars
        // are still inherited from Claude Code's environment when set.
        if !input.is_required && input.default.is_none() {
            return None;
        }
        self.record(name, meta_key, input);
        Some(match &input.default {
            Some(default) if !default.contains('}') => format!("${{{name}:-{default}}}"),
            _ => format!("${{{name}}}"),
        })
    }

    /// `text` with each `{v}` replaced by the placeholder of variable `v`.
    fn fill(&mut self, text: &str, variables: &IndexMap<String, Input>) -> String {
        let mut out = text.to_string();
        for (key, input) in variables {
            let name = self.name(
                if crate::config::expansion::is_variable_name(key)
                    && key
                        .chars()
                        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
                {
                    key.clone()
                } else {
                    format!("{}_{}", self.prefix, screaming_snake(key))
                },
            );
            self.record(&name, key, input);
            let placeholder = match &input.default {
                Some(default) if !default.contains('}') => format!("${{{name}:-{default}}}"),
                _ => format!("${{{name}}}"),
            };
            out = out.replace(&format!("{{{key}}}"), &placeholder);
        }
        out
    }

    fn record(&mut self, name: &str, meta_key: &str, input: &Input) {
        if self.variables.iter().any(|variable| variable.name == name) {
            return;
        }
        let meta = self.meta.get(name).or_else(|| self.meta.get(meta_key));
        let text = |key: &str| {
            meta.and_then(|meta| meta.get(key))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        self.variables.push(TemplateVariable {
            name: name.to_string(),
            description: input.description.clone(),
            secret: input.is_secret,
            required: input.is_required,
            default: input.default.clone(),
            how_to_get: text("howToGet"),
            pattern: text("pattern"),
        });
    }
}

/// The template whose package or remote `entry` was made from, judged by
/// package identifier, image or URL; for descriptions and format checks.
pub fn matching<'a>(templates: &'a [Template], entry: &ServerEntry) -> Option<&'a Template> {
    let args = entry.args();
    let url = entry.url().unwrap_or_default();
    templates.iter().find(|template| {
        let packages = template.server.packages.iter().any(|package| {
            let id = package
                .identifier
                .split(':')
                .next()
                .unwrap_or(&package.identifier);
            args.iter().any(|arg| {
                *arg == package.identifier
                    || arg.starts_with(&format!("{}@", package.identifier))
                    || arg.starts_with(&format!("{id}:"))
                    || *arg == id
            })
        });
        let remotes = !url.is_empty()
            && template.server.remotes.iter().any(|remote| {
                // Only a fixed host can identify a remote (`https://{tenant}…` cannot).
                let fixed = remote.url.split('{').next().unwrap_or(&remote.url);
                let host = fixed.split_once("://").map_or("", |(_, rest)| rest);
                host.contains('.') && url.starts_with(fixed.trim_end_matches('/'))
            });
        packages || remotes
    })
}

/// What a template says of a variable, as comment lines: its description
/// and where to get a value.
pub fn described(variable: &TemplateVariable) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(description) = &variable.description {
        lines.push(description.clone());
    }
    if let Some(how) = &variable.how_to_get {
        lines.push(format!("Get one: {how}"));
    }
    lines
}

/// Every variable a template declares, by the name its placeholder gets,
/// as rendered for each of its packages and remotes.
pub fn declared_variables(template: &Template, server: &str) -> Vec<TemplateVariable> {
    let mut all: Vec<TemplateVariable> = Vec::new();
    let choices = (1..=template.server.packages.len())
        .map(Choice::Package)
        .chain((1..=template.server.remotes.len()).map(Choice::Remote));
    for choice in choices {
        if let Ok(rendered) = render(template, choice, server) {
            for variable in rendered.variables {
                if !all.iter().any(|known| known.name == variable.name) {
                    all.push(variable);
                }
            }
        }
    }
    all
}

fn screaming_snake(text: &str) -> String {
    crate::config::expansion::variable_name_from(text).unwrap_or_else(|| "VALUE".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEDGER: &str = r#"{
      "$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
      "name": "io.github.acme/ledger", "title": "Ledger", "version": "2.4.0", "description": "Query and annotate Acme ledger entries",
      "packages": [{
        "registryType": "npm", "identifier": "@acme/ledger-mcp", "version": "2.4.0", "transport": { "type": "stdio" },
        "packageArguments": [
          { "type": "positional", "value": "serve" },
          { "type": "named", "name": "--region", "default": "eu", "choices": ["eu", "us"] },
          { "type": "positional", "valueHint": "books_dir", "format": "filepath", "isRequired": true }
        ],
        "environmentVariables": [{ "name": "LEDGER_TOKEN", "isRequired": true, "isSecret": true, "description": "API token" },
                                 { "name": "LEDGER_LOG", "default": "warn" },
                                 { "name": "LEDGER_DEBUG" }]
      }, {
        "registryType": "oci", "identifier": "ghcr.io/acme/ledger:2.4.0", "transport": { "type": "stdio" },
        "environmentVariables": [{ "name": "LEDGER_TOKEN", "isRequired": true, "isSecret": true }]
      }, {
        "registryType": "pypi", "identifier": "ledger-mcp", "version": "2.4.0", "transport": { "type": "stdio" }
      }],
      "remotes": [{
        "type": "streamable-http", "url": "https://{tenant}.ledger.example.com/mcp", "variables": { "tenant": { "isRequired": true } },
        "headers": [{ "name": "Authorization", "value": "Bearer {token}",
                      "variables": { "token": { "isRequired": true, "isSecret": true } } }]
      }],
      "_meta": {"dev.mcpenv/template": {"variables": {"LEDGER_TOKEN": {"howToGet": "https://ledger.example.com/tokens", "pattern": "^lt_"}}}}
    }"#;

    fn ledger() -> Template {
        parse("ledger", Origin::Embedded, Path::new("ledger.json"), LEDGER).unwrap()
    }

    #[test]
    fn npm_renders_like_the_reference() {
        let rendered = render(&ledger(), Choice::Default, "ledger").unwrap();
        assert_eq!(
            rendered.entry,
            json!({"type": "stdio", "command": "npx",
                "args": ["-y", "@acme/ledger-mcp@2.4.0", "serve", "--region", "${LEDGER_REGION:-eu}", "${LEDGER_BOOKS_DIR}"],
                "env": {"LEDGER_TOKEN": "${LEDGER_TOKEN}", "LEDGER_LOG": "${LEDGER_LOG:-warn}"}})
        );
        let token = rendered
            .variables
            .iter()
            .find(|variable| variable.name == "LEDGER_TOKEN")
            .unwrap();
        assert!(token.secret && token.required);
        assert_eq!(
            token.how_to_get.as_deref(),
            Some("https://ledger.example.com/tokens")
        );
        assert_eq!(token.pattern.as_deref(), Some("^lt_"));
    }

    #[test]
    fn oci_keeps_secrets_out_of_argv_and_pypi_uses_uvx() {
        let rendered = render(&ledger(), Choice::Package(2), "ledger").unwrap();
        assert_eq!(
            rendered.entry,
            json!({"type": "stdio", "command": "docker", "args": ["run", "-i", "--rm", "-e", "LEDGER_TOKEN", "ghcr.io/acme/ledger:2.4.0"],
                "env": {"LEDGER_TOKEN": "${LEDGER_TOKEN}"}})
        );
        let rendered = render(&ledger(), Choice::Package(3), "ledger").unwrap();
        assert_eq!(rendered.entry["command"], "uvx");
        assert_eq!(rendered.entry["args"], json!(["ledger-mcp@2.4.0"]));
    }

    #[test]
    fn remotes_fill_url_and_header_variables() {
        let rendered = render(&ledger(), Choice::Remote(1), "ledger").unwrap();
        assert_eq!(
            rendered.entry,
            json!({"type": "http", "url": "https://${LEDGER_TENANT}.ledger.example.com/mcp",
                "headers": {"Authorization": "Bearer ${LEDGER_TOKEN}"}})
        );
        assert!(matches!(
            render(&ledger(), Choice::Remote(2), "ledger"),
            Err(TemplateError::NoSuchChoice { .. })
        ));
    }

    #[test]
    fn remotes_never_use_a_name_claude_code_blanks() {
        let text = r#"{"name": "io.example/registry", "description": "d", "version": "1",
          "remotes": [{"type": "streamable-http", "url": "https://r.example.com/mcp",
            "headers": [{"name": "Authorization", "value": "Bearer {NPM_TOKEN}", "variables": {"NPM_TOKEN": {"isRequired": true, "isSecret": true}}}]}]}"#;
        let template = parse("registry", Origin::Embedded, Path::new("r.json"), text).unwrap();
        let rendered = render(&template, Choice::Default, "registry").unwrap();
        assert_eq!(
            rendered.entry["headers"]["Authorization"],
            "Bearer ${REGISTRY_NPM_TOKEN}"
        );
        assert_eq!(rendered.variables[0].name, "REGISTRY_NPM_TOKEN");
    }

    #[test]
    fn malformed_templates_name_the_field() {
        let error = parse("x", Origin::Embedded, Path::new("x.json"), r#"{"name": "a/b", "description": "d", "version": "1", "packages": [{"registryType": "npm", "identifier": 5, "transport": {"type": "stdio"}}]}"#).unwrap_err();
        assert_eq!(
            error.to_string(),
            "template `x.json` is malformed at `packages[0].identifier`: invalid type: integer `5`, expected a string"
        );
        let error = parse(
            "x",
            Origin::Embedded,
            Path::new("x.json"),
            r#"{"name": "a/b", "description": "d", "version": "1"}"#,
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "template `x.json` is malformed at `.`: it has neither `packages` nor `remotes`"
        );
    }

    #[test]
    fn entries_are_matched_to_their_template() {
        let templates = vec![ledger()];
        let npm = ServerEntry::from_value(
            json!({"command": "npx", "args": ["-y", "@acme/ledger-mcp@2.4.0"]}),
        );
        let remote = ServerEntry::from_value(
            json!({"type": "http", "url": "https://acme.ledger.example.com/mcp"}),
        );
        let other =
            ServerEntry::from_value(json!({"command": "npx", "args": ["-y", "@other/thing"]}));
        assert!(matching(&templates, &npm).is_some());
        assert!(matching(&templates, &other).is_none());
        // `https://{tenant}…` has no fixed host to match on.
        assert!(matching(&templates, &remote).is_none());
    }

    #[test]
    fn every_embedded_template_parses_and_renders() {
        for file in EMBEDDED.files() {
            let Some(name) = json_stem(file.path()) else {
                continue;
            };
            let template = embedded(&name)
                .unwrap()
                .unwrap_or_else(|error| panic!("{error}"));
            for choice in (1..=template.server.packages.len())
                .map(Choice::Package)
                .chain((1..=template.server.remotes.len()).map(Choice::Remote))
            {
                match render(&template, choice, &name) {
                    Ok(rendered) => {
                        let entry = ServerEntry::from_value(rendered.entry);
                        assert!(entry.problems().is_empty(), "{name} {choice:?}");
                        // Every placeholder is declared, and every declared variable is used.
                        let used: Vec<String> = entry
                            .expandable_fields()
                            .iter()
                            .flat_map(|(_, value)| crate::config::expansion::references(value))
                            .map(|reference| reference.name)
                            .collect();
                        for name_used in &used {
                            assert!(
                                rendered
                                    .variables
                                    .iter()
                                    .any(|variable| &variable.name == name_used),
                                "{name} {choice:?}: `{name_used}` undeclared"
                            );
                        }
                        for variable in &rendered.variables {
                            assert!(
                                used.contains(&variable.name),
                                "{name} {choice:?}: `{}` declared but unused",
                                variable.name
                            );
                        }
                        // Secrets appear only as placeholders, never as values.
                        for (_, value) in entry.expandable_fields() {
                            let probe = ServerEntry::from_value(
                                serde_json::json!({"command": "x", "env": {"VALUE": value}}),
                            );
                            assert!(
                                crate::secrets::scan_entry(&probe).is_empty(),
                                "{name}: {value}"
                            );
                        }
                    }
                    Err(TemplateError::Unsupported { .. }) => {}
                    Err(error) => panic!("{name} {choice:?}: {error}"),
                }
            }
        }
    }
}
