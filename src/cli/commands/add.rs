//! `mcpenv add`: a server from a command or a URL, in Claude Code's shape.

use std::io::{self, Write};
use std::path::PathBuf;

use indexmap::IndexMap;
use serde::Serialize;

use crate::cli::args::{AddArgs, ScopeArg, TransportArg};
use crate::cli::commands::add_oauth as oauth;
use crate::cli::commands::add_words::place_words;
use crate::cli::error::CliError;
use crate::cli::render::{Report, shown, warning};
use crate::cli::resolve::Ctx;
use crate::extract::{self, Candidate, Move};
use crate::model::ServerEntry;
use crate::model::{self, Transport};
use crate::ops::extraction::{known_values, plan_error};
use crate::ops::writes::{begin_writes, save_plan_env_with};
use crate::scope::Scope;
use crate::store::{self, IfExists, Progress, Target, Written};
use serde_json::Value;

/// What `add` (and `add-json`) did.
#[derive(Debug, Serialize)]
pub struct AddReport {
    /// The server's name.
    pub name: String,
    /// The scope written to.
    pub scope: Scope,
    /// The entry's transport.
    pub transport: Transport,
    /// The file written.
    pub file: PathBuf,
    /// Whether the file was created.
    pub created: bool,
    /// Whether an entry of the same name was replaced.
    pub replaced: bool,
    /// Things worth knowing about what was written.
    pub warnings: Vec<String>,
    /// Literal secrets moved into `.env` (project scope).
    pub moves: Vec<Move>,
    /// `.env` files written before the config.
    pub env_written: Vec<PathBuf>,
    /// The template the entry came from.
    pub template: Option<String>,
    /// Variables the server needs that no source sets yet.
    pub still_missing: Vec<String>,
    /// What mcpenv inferred from the arguments (`-t http` from a URL).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Where the OAuth client secret went (`--client-secret`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<oauth::StoredSecret>,
    /// The entry as written.
    #[serde(skip)]
    pub stored: Value,
    #[serde(skip)]
    file_shown: String,
}

impl AddReport {
    /// The report for a finished write.
    pub fn new(
        ctx: &Ctx,
        name: &str,
        scope: Scope,
        transport: Transport,
        written: Written,
        mut warnings: Vec<String>,
    ) -> Self {
        if ctx.locations.managed_mcp().is_file() {
            warnings.push(format!(
                "managed MCP configuration `{}` is active: Claude Code ignores this server",
                ctx.locations.managed_mcp().display()
            ));
        }
        Self {
            name: name.to_string(),
            scope,
            transport,
            file_shown: crate::cli::commands::scope_file(ctx, scope, &written.path),
            file: written.path,
            created: written.created,
            replaced: written.replaced,
            warnings,
            moves: Vec::new(),
            env_written: Vec::new(),
            template: None,
            still_missing: Vec::new(),
            notes: Vec::new(),
            client_secret: None,
            stored: Value::Null,
        }
    }
}

impl Report for AddReport {
    fn write_text(&self, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }

    fn write_status(&self, err: &mut dyn Write) -> io::Result<()> {
        for note in &self.notes {
            writeln!(err, "note: {}", shown(note))?;
        }
        for message in &self.warnings {
            warning(err, message)?;
        }
        for moved in &self.moves {
            writeln!(
                err,
                "Moved {} into `.env` as `{}` ({}), leaving `${{{}}}` in the entry",
                moved.field, moved.variable, moved.value, moved.variable
            )?;
        }
        for file in &self.env_written {
            writeln!(err, "Wrote `{}`", file.display())?;
        }
        let verb = if self.replaced { "Replaced" } else { "Added" };
        writeln!(
            err,
            "{verb} {} MCP server `{}` in {} scope",
            self.transport, self.name, self.scope
        )?;
        let verb = if self.created { "Created" } else { "Wrote" };
        writeln!(err, "{verb} {}", self.file_shown)?;
        if let Some(template) = &self.template {
            writeln!(err, "From template `{template}`")?;
        }
        if let Some(stored) = &self.client_secret {
            writeln!(
                err,
                "Stored the OAuth client secret in `{}` under `{}`, where Claude Code reads it",
                stored.file.display(),
                shown(&stored.key)
            )?;
        }
        if self.scope == Scope::Project {
            writeln!(
                err,
                "Claude Code asks each teammate to approve project servers before it starts them; approve it for yourself with `mcpenv approve {}`",
                shown(&self.name)
            )?;
        }
        if !self.still_missing.is_empty() {
            writeln!(
                err,
                "Still missing: {}",
                crate::cli::render::quoted_names(&self.still_missing)
            )?;
            writeln!(
                err,
                "hint: set them with `mcpenv onboard`; `mcpenv check` shows what each server needs"
            )?;
        }
        Ok(())
    }
}

/// Runs `mcpenv add`.
pub fn run(ctx: &Ctx, args: &AddArgs) -> Result<AddReport, CliError> {
    let words = place_words(ctx, args)?;
    check_name(&words.name)?;
    if let Some(template) = &args.template {
        return crate::cli::commands::templates::add_from_template(
            ctx,
            args,
            &words.name,
            template,
        );
    }
    if !args.vars.is_empty() || args.package.is_some() || args.remote.is_some() {
        return Err(
            CliError::usage("`--var`, `--package` and `--remote` go with `--template`").with_hint(
                "add `--template NAME`, or pass values with `-e KEY=VALUE` / `-H 'Name: value'`",
            ),
        );
    }
    let command_or_url = words.command.as_str();
    let env = parse_env(&words.env)?;
    let headers = parse_headers(&args.headers)?;
    let mut warnings = Vec::new();
    let mut notes = Vec::new();
    let chosen = args.transport.unwrap_or_else(|| {
        if is_http_url(command_or_url) {
            notes.push(format!(
                "`{command_or_url}` is a URL: added as `-t http` (pass `-t sse` for an SSE server, `-t stdio` for a command)"
            ));
            TransportArg::Http
        } else {
            TransportArg::Stdio
        }
    });
    let mut client_secret = None;
    let (transport, entry) = match chosen {
        TransportArg::Stdio => {
            if !headers.is_empty() {
                return Err(
                    CliError::usage("`--header` applies only to http and sse servers")
                        .with_hint("add `-t http` (or `-t sse`) for a server reached by URL"),
                );
            }
            if looks_like_url(command_or_url) {
                warnings.push(format!(
                    "`{command_or_url}` looks like a URL but was added as a stdio command; for a remote server use `-t http` (or `-t sse`)"
                ));
            }
            if args.client_id.is_some() || args.callback_port.is_some() || args.client_secret {
                // Claude Code 2.1.332's warning, which also names its `--xaa`.
                warnings.push(
                    "--client-id, --client-secret and --callback-port only work with HTTP/SSE servers and are ignored for stdio".to_string(),
                );
            }
            (
                Transport::Stdio,
                model::stdio_entry(command_or_url, &words.args, &env),
            )
        }
        TransportArg::Http | TransportArg::Sse => {
            let transport = if chosen == TransportArg::Http {
                Transport::Http
            } else {
                Transport::Sse
            };
            if !env.is_empty() || !words.args.is_empty() {
                return Err(CliError::usage(format!(
                    "`--env` and command arguments apply only to stdio servers, not {transport}"
                ))
                .with_hint("pass credentials for a remote server as headers: `-H 'Authorization: Bearer ${TOKEN}'`"));
            }
            let mut entry = model::remote_entry(&transport, command_or_url, &headers);
            if let (Some(oauth), Some(object)) = (
                oauth_object(args.client_id.as_deref(), args.callback_port),
                entry.as_object_mut(),
            ) {
                object.insert("oauth".into(), oauth);
            }
            if args.client_secret {
                client_secret = Some(oauth::read_client_secret(ctx, args, &words, chosen)?);
            }
            (transport, entry)
        }
    };
    let options = WriteOptions {
        scope: args.scope,
        replace: args.replace,
        allow_literal: args.allow_literal,
        force: args.force,
    };
    let mut report = write_entry(ctx, &words.name, &options, entry, transport, warnings)?;
    report.notes = notes;
    if let Some(secret) = client_secret {
        report.client_secret = Some(oauth::save_client_secret(ctx, &report, &secret)?);
    }
    Ok(report)
}

/// Claude Code's `oauth` member: `clientId`, then `callbackPort`, each
/// only when given.
fn oauth_object(client_id: Option<&str>, callback_port: Option<u16>) -> Option<Value> {
    let mut oauth = serde_json::Map::new();
    if let Some(client_id) = client_id {
        oauth.insert("clientId".into(), Value::from(client_id));
    }
    if let Some(port) = callback_port {
        oauth.insert("callbackPort".into(), Value::from(port));
    }
    (!oauth.is_empty()).then_some(Value::Object(oauth))
}

/// How `add` and `add-json` write an entry.
pub struct WriteOptions {
    /// The scope.
    pub scope: ScopeArg,
    /// `--replace`.
    pub replace: bool,
    /// `--allow-literal`: keep secrets in a project entry.
    pub allow_literal: bool,
    /// `--force`: write into a `.env` others can read.
    pub force: bool,
}

/// Writes `entry` as server `name` and reports it; shared by `add` and
/// `add-json`. A project entry's literal secrets go to `.env` first, and
/// the entry gets placeholders, unless `--allow-literal`.
pub fn write_entry(
    ctx: &Ctx,
    name: &str,
    options: &WriteOptions,
    entry: Value,
    transport: Transport,
    mut warnings: Vec<String>,
) -> Result<AddReport, CliError> {
    let scope = Scope::from(options.scope);
    let target = Target::for_scope(&ctx.locations, scope);
    let if_exists = if options.replace {
        IfExists::Replace
    } else {
        IfExists::Fail
    };
    let mut entry = entry;
    let mut moves = Vec::new();
    let mut progress = Progress::default();
    if scope == Scope::Project {
        // Refused before `.env` is touched.
        store::preflight(&target)?;
        let candidate = Candidate {
            target: target.clone(),
            server: name.to_string(),
            entry: ServerEntry::from_value(entry.clone()),
            env_file: ctx.env_file_for(scope),
        };
        let plan = extract::plan(std::slice::from_ref(&candidate), &known_values(ctx)?)
            .map_err(plan_error)?;
        if !plan.is_empty() {
            if options.allow_literal {
                warnings.push(format!(
                    "kept {} literal secret(s) in `{}`, a file meant to be committed",
                    plan.moves.len(),
                    target.path.display()
                ));
            } else {
                refuse_duplicate(ctx, &target, name, options.replace)?;
                let changes: Vec<_> = plan
                    .changes
                    .iter()
                    .flat_map(|(_, changes)| changes.iter().cloned())
                    .collect();
                let placeholders = extract::apply_changes(name, &candidate.entry, &changes);
                let example = extract::example_variables(
                    [(name, &placeholders)],
                    &crate::templates::all(&ctx.template_dirs).0,
                );
                progress = begin_writes(ctx, Some((&plan, &example)), &[&target.path]);
                save_plan_env_with(ctx, &plan, &example, options.force, &mut progress)?;
                entry = placeholders.to_value();
                moves = plan.moves;
            }
        }
    }
    let done = store::add_server(&ctx.locations, &target, name, &entry, if_exists)
        .map_err(|error| already_exists_hint(ctx, error, name, scope).interrupted(&progress))?;
    warnings.extend(blanked_warnings(name, &entry));
    let mut report = AddReport::new(ctx, name, scope, transport, done, warnings);
    report.stored = entry;
    report.moves = moves;
    report.env_written = progress.into_written();
    Ok(report)
}

/// A warning for each variable of a remote entry that Claude Code 2.1.332
/// sends empty (`Authorization: Bearer ${NPM_TOKEN}`), with a name it
/// would send.
fn blanked_warnings(name: &str, entry: &Value) -> Vec<String> {
    let entry = ServerEntry::from_value(entry.clone());
    if !entry.transport().is_remote() {
        return Vec::new();
    }
    let prefix = crate::placeholder::variable_name_from(name).unwrap_or_default();
    let mut warned: Vec<String> = Vec::new();
    for (_, value) in entry.expandable_fields() {
        for reference in crate::placeholder::references(value) {
            if crate::claude_code::blanked::blanked_toward_remote(&reference.name)
                && !warned.contains(&reference.name)
            {
                warned.push(reference.name);
            }
        }
    }
    warned
        .into_iter()
        .map(|variable| {
            format!(
                "Claude Code 2.1.332 sends `${{{variable}}}` empty to remote servers; use another variable name, e.g. `${{{}}}`",
                crate::claude_code::blanked::remote_safe_name(&variable, &prefix)
            )
        })
        .collect()
}

/// Fails before anything is written when `name` exists and may not be replaced.
fn refuse_duplicate(ctx: &Ctx, target: &Target, name: &str, replace: bool) -> Result<(), CliError> {
    if replace {
        return Ok(());
    }
    let Some(document) = crate::layered::load_document(&target.path, &[])? else {
        return Ok(());
    };
    let object_path: Vec<&str> = target.object_path.iter().map(String::as_str).collect();
    let exists = document
        .object_at(&object_path)
        .ok()
        .flatten()
        .is_some_and(|object| document.find_member(&object, name).is_some());
    if exists {
        let error = crate::error::StoreError::AlreadyExists {
            name: name.to_string(),
            scope: target.scope,
            path: target.path.clone(),
        };
        return Err(already_exists_hint(ctx, error, name, target.scope));
    }
    Ok(())
}

/// A usage error for names Claude Code would refuse.
pub fn check_name(name: &str) -> Result<(), CliError> {
    model::validate_name(name).map_err(|error| {
        let hint = match error {
            model::NameError::Reserved(_) => "pick another name; Claude Code reserves this one",
            _ => "use only letters, digits, `-` and `_`, e.g. `my-server`",
        };
        CliError::usage(error.to_string()).with_hint(hint)
    })
}

/// Adds the "what now" to a duplicate-name error.
pub fn already_exists_hint(
    ctx: &Ctx,
    error: crate::error::StoreError,
    name: &str,
    scope: Scope,
) -> CliError {
    let duplicate = matches!(error, crate::error::StoreError::AlreadyExists { .. });
    let error = CliError::from(error);
    if duplicate {
        error.with_hint(format!(
            "replace it with `--replace`, or remove it first: `{}`",
            ctx.command(&["remove", name, "-s", scope.as_str()])
        ))
    } else {
        error
    }
}

fn parse_env(pairs: &[String]) -> Result<IndexMap<String, String>, CliError> {
    let mut env = IndexMap::new();
    for pair in pairs {
        match pair.split_once('=') {
            Some((key, value)) if !key.is_empty() => {
                env.insert(key.to_string(), value.to_string());
            }
            _ => {
                return Err(CliError::usage(format!(
                    "invalid environment variable `{pair}`: expected KEY=VALUE"
                ))
                .with_hint("give one variable per flag: `-e KEY1=value1 -e KEY2=value2`"));
            }
        }
    }
    Ok(env)
}

fn parse_headers(headers: &[String]) -> Result<IndexMap<String, String>, CliError> {
    let mut parsed = IndexMap::new();
    for header in headers {
        let Some((name, value)) = header.split_once(':') else {
            return Err(CliError::usage(format!(
                "invalid header `{header}`: expected `Name: value`"
            ))
            .with_hint("give one header per flag: `-H 'Authorization: Bearer ${TOKEN}'`"));
        };
        let name = name.trim();
        if name.is_empty() {
            return Err(
                CliError::usage(format!("invalid header `{header}`: the name is empty"))
                    .with_hint("write the header as `Name: value`"),
            );
        }
        parsed.insert(name.to_string(), value.trim().to_string());
    }
    Ok(parsed)
}

/// An `http://` or `https://` URL, which `add` reads as `-t http`.
pub fn is_http_url(word: &str) -> bool {
    let lower = word.to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

fn looks_like_url(command: &str) -> bool {
    command.starts_with("http://")
        || command.starts_with("https://")
        || command.starts_with("localhost")
        || command.ends_with("/sse")
        || command.ends_with("/mcp")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_pairs_split_at_the_first_equals_and_last_wins() {
        let env = parse_env(&["K=a=b".into(), "E=".into(), "K=c".into()]).unwrap();
        assert_eq!(
            env,
            IndexMap::from([
                ("K".to_string(), "c".to_string()),
                ("E".to_string(), String::new())
            ])
        );
        assert!(parse_env(&["NOEQ".into()]).is_err());
        assert!(parse_env(&["=v".into()]).is_err());
    }

    #[test]
    fn headers_split_at_the_first_colon_and_trim() {
        let headers = parse_headers(&["Authorization:  Bearer x:y ".into()]).unwrap();
        assert_eq!(headers["Authorization"], "Bearer x:y");
        assert!(parse_headers(&["NoColon".into()]).is_err());
        assert!(parse_headers(&[": v".into()]).is_err());
    }

    #[test]
    fn url_like_commands() {
        assert!(looks_like_url("https://x/mcp"));
        assert!(looks_like_url("localhost:3000"));
        assert!(!looks_like_url("npx"));
    }
}
