//! Adding a server, from a typed [`Source`]: a command, a URL, an entry
//! as given, or a template; the entry is built here, in one place.
//! [`plan`] decides everything (the entry as it will be stored, the
//! secrets that go to a `.env` first, every file that changes) and writes
//! nothing; [`apply`] writes (with a preview session, it shows each
//! file's change and writes nothing). The
//! CLI's `add` and `add-json` and `serve`'s `add_server` all go through
//! here.

use std::path::PathBuf;

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::Value;

use crate::config::error::StoreError;
use crate::config::managed_policy::Policy;
use crate::config::model::{self, ServerEntry, Transport};
use crate::config::scope::Scope;
use crate::config::store::{self, IfExists, Progress, Target, Written};
use crate::envfiles::dotenv::ExampleLine;
use crate::envfiles::{self};
use crate::mechanics::fsx;
use crate::ops::extraction_inputs::{env_error, known_values, plan_error};
use crate::ops::hints::template_error;
use crate::ops::write_steps::{begin_writes, save_plan_env_with, save_project_env_with};
use crate::ops::{Context, Error};
use crate::secrets::extraction_plan::{self, Candidate, ExtractionPlan, Move};
use crate::templates::{self, Choice, Template, TemplateVariable};

/// What to add.
#[derive(Debug, Clone)]
pub struct AddRequest {
    /// The server's name.
    pub name: String,
    /// The scope to add it to.
    pub scope: Scope,
    /// Where its entry comes from.
    pub source: Source,
    /// Replace a server of the same name in that scope.
    pub replace: bool,
    /// What a literal secret in the entry (or a template's secret
    /// variable given a value) becomes.
    pub literal: Literal,
    /// Write into a `.env` other users can read.
    pub force: bool,
    /// What the front-end noticed about its own arguments (a flag that
    /// does not apply), in its words; shown first among the plan's
    /// warnings.
    pub warnings: Vec<String>,
}

/// What becomes of a literal secret in what is added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Literal {
    /// A project entry's go to `.env`, a placeholder in their place; a
    /// template's secret values go to a dotenv file (the CLI's default).
    Move,
    /// Kept in the entry, with a warning (`--allow-literal`).
    Keep,
    /// Refused, naming the placeholder to use: the caller must never send
    /// a secret value (`serve`'s agent).
    Refuse,
}

/// Where an entry comes from. The entry itself is built here, in the
/// shape `claude mcp add` writes, never by a front-end.
#[derive(Debug, Clone)]
pub enum Source {
    /// A command Claude Code starts, talking over stdin and stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Its environment, values as given (`${VAR}` placeholders or
        /// literals).
        env: IndexMap<String, String>,
    },
    /// A server reached by URL.
    Remote {
        /// How Claude Code talks to it.
        transport: RemoteTransport,
        /// Where it answers.
        url: String,
        /// Headers sent with every request, values as given.
        headers: IndexMap<String, String>,
        /// Claude Code's OAuth client settings (`--client-id`,
        /// `--callback-port`).
        oauth: OAuthClient,
    },
    /// An entry in Claude Code's shape, as given (`add-json`): stored as
    /// `claude mcp add-json` normalises it.
    Json(Value),
    /// A template, one of its packages or remotes, and `KEY=VALUE` values
    /// for its variables: secret ones go to a `.env`, others become
    /// placeholder defaults.
    Template {
        /// The template, as found.
        template: Box<Template>,
        /// Which package or remote.
        choice: Choice,
        /// Values for its variables.
        vars: IndexMap<String, String>,
    },
}

/// The transports of a server reached by URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemoteTransport {
    /// Streamable HTTP.
    Http,
    /// Server-sent events.
    Sse,
}

impl From<RemoteTransport> for Transport {
    fn from(transport: RemoteTransport) -> Self {
        match transport {
            RemoteTransport::Http => Self::Http,
            RemoteTransport::Sse => Self::Sse,
        }
    }
}

/// The `oauth` member of a remote entry; nothing set: no member.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OAuthClient {
    /// `clientId`.
    pub client_id: Option<String>,
    /// `callbackPort`.
    pub callback_port: Option<u16>,
}

impl OAuthClient {
    /// Claude Code's `oauth` member: `clientId`, then `callbackPort`, each
    /// only when given.
    fn member(&self) -> Option<Value> {
        let mut oauth = serde_json::Map::new();
        if let Some(client_id) = &self.client_id {
            oauth.insert("clientId".into(), Value::from(client_id.as_str()));
        }
        if let Some(port) = self.callback_port {
            oauth.insert("callbackPort".into(), Value::from(port));
        }
        (!oauth.is_empty()).then_some(Value::Object(oauth))
    }
}

/// The entry of a source other than a template, its transport, and what
/// building it noticed.
fn build_entry(source: Source) -> Result<(Value, Transport, Vec<String>), Error> {
    Ok(match source {
        Source::Stdio { command, args, env } => (
            model::stdio_entry(&command, &args, &env),
            Transport::Stdio,
            Vec::new(),
        ),
        Source::Remote {
            transport,
            url,
            headers,
            oauth,
        } => {
            let transport = Transport::from(transport);
            let mut entry = model::remote_entry(&transport, &url, &headers);
            if let (Some(oauth), Some(object)) = (oauth.member(), entry.as_object_mut()) {
                object.insert("oauth".into(), oauth);
            }
            (entry, transport, Vec::new())
        }
        Source::Json(value) => {
            let model::Normalized {
                entry,
                unknown,
                notes,
            } = model::normalize_entry(value).map_err(|error| {
                Error::usage(format!("invalid server entry: {error}")).with_hint(
                    r#"stdio entries need "command"; http and sse entries need "type" and "url""#,
                )
            })?;
            let mut warnings = notes;
            if !unknown.is_empty() {
                let keys: Vec<String> = unknown.iter().map(|key| format!("`{key}`")).collect();
                warnings.push(format!(
                    "kept keys that Claude Code does not use: {}",
                    keys.join(", ")
                ));
            }
            let transport = ServerEntry::from_value(entry.clone()).transport();
            (entry, transport, warnings)
        }
        Source::Template { .. } => unreachable!("templates are rendered by plan_template"),
    })
}

/// Everything [`apply`] will do, decided.
#[derive(Debug, Clone)]
pub struct AddPlan {
    /// The server's name.
    pub name: String,
    /// The scope written to.
    pub scope: Scope,
    /// The file and object the entry goes into.
    pub target: Target,
    /// The entry as it will be stored.
    pub entry: Value,
    /// Its transport.
    pub transport: Transport,
    /// The template it came from.
    pub template: Option<String>,
    /// Things worth knowing about what will be written.
    pub warnings: Vec<String>,
    /// What goes into dotenv files before the config is written.
    env: EnvWrites,
    if_exists: IfExists,
    force: bool,
}

/// The dotenv side of an add.
#[derive(Debug, Clone)]
enum EnvWrites {
    /// Nothing.
    Nothing,
    /// The literal secrets of a project entry, moved; the lines that
    /// document them in `.env.example`.
    Extracted {
        plan: ExtractionPlan,
        example: Vec<ExampleLine>,
    },
    /// A template's secret values and its `.env.example` lines: into the
    /// user's store for a user server, else the project's files.
    Template {
        secrets: Vec<(String, String)>,
        example: Vec<ExampleLine>,
    },
}

/// What an add did.
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
    /// What the front-end inferred from its arguments (`-t http` from a
    /// URL).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Where the OAuth client secret went (`--client-secret`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<StoredSecret>,
    /// For a project server: the command that approves it for this user
    /// (with `--trust` while the folder is not trusted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approve_command: Option<String>,
    /// The entry as written.
    #[serde(skip)]
    pub stored: Value,
    /// The file as a person knows it (with the project key of a local
    /// entry).
    #[serde(skip)]
    pub file_shown: String,
}

/// Where an OAuth client secret was stored.
#[derive(Debug, Serialize)]
pub struct StoredSecret {
    /// Claude Code's credentials file.
    pub file: PathBuf,
    /// The key under `mcpOAuthClientConfig`.
    pub key: String,
}

/// Files the OAuth client `secret` of the server `report` wrote, under
/// the key Claude Code reads it by, in its credentials file (private
/// before the secret goes in).
pub fn save_client_secret(
    ctx: &Context,
    report: &AddReport,
    secret: &str,
) -> Result<StoredSecret, Error> {
    let file = ctx
        .locations
        .claude_data_dir
        .join(crate::config::claude_code::credentials::FILE_NAME);
    let key =
        crate::config::claude_code::credentials::client_config_key(&report.name, &report.stored);
    crate::config::claude_code::credentials::save_client_secret(&ctx.edit, &ctx.locations.state_dir, &file, &key, secret).map_err(
        |error| {
            Error::from(error).with_hint(format!(
                "the server `{}` was written without its secret; run the same command with `--replace` once that is fixed",
                report.name
            ))
        },
    )?;
    Ok(StoredSecret { file, key })
}

/// A usage error for names Claude Code would refuse.
pub fn check_name(name: &str) -> Result<(), Error> {
    model::validate_name(name).map_err(|error| {
        let hint = match error {
            model::NameError::Reserved(_) => "pick another name; Claude Code reserves this one",
            _ => "use only letters, digits, `-` and `_`, e.g. `my-server`",
        };
        Error::usage(error.to_string()).with_hint(hint)
    })
}

/// Decides the add of `request`, reading the scope's file and the dotenv
/// files; writes nothing.
pub fn plan(ctx: &Context, request: AddRequest) -> Result<AddPlan, Error> {
    check_name(&request.name)?;
    let scope = request.scope;
    let target = Target::for_scope(&ctx.locations, scope);
    let if_exists = if request.replace {
        IfExists::Replace
    } else {
        IfExists::Fail
    };
    let name = request.name;
    let mut warnings = request.warnings;
    let (entry, transport, template, env) = match request.source {
        Source::Template {
            template,
            choice,
            vars,
        } => {
            refuse_duplicate(ctx, &target, &name, request.replace)?;
            let (entry, env) =
                plan_template(ctx, &template, choice, &name, scope, vars, request.literal)?;
            let transport = ServerEntry::from_value(entry.clone()).transport();
            (entry, transport, Some(template.name), env)
        }
        source => {
            if let Source::Json(value) = &source {
                // The entry may come from stdin: the shield has not seen it.
                ctx.shield.learn(|redactor| {
                    redactor.learn_entry(&ServerEntry::from_value(value.clone()));
                });
            }
            let (entry, transport, noticed) = build_entry(source)?;
            warnings.extend(noticed);
            if request.literal == Literal::Refuse {
                refuse_literal_secrets(ctx, &name, scope, &entry)?;
            }
            let (entry, env) = plan_entry(
                ctx,
                &target,
                &name,
                entry,
                request.literal == Literal::Keep,
                request.replace,
                &mut warnings,
            )?;
            (entry, transport, None, env)
        }
    };
    refuse_blocked(ctx, &name, &entry)?;
    warnings.extend(blanked_warnings(&name, &entry));
    Ok(AddPlan {
        name,
        scope,
        target,
        entry,
        transport,
        template,
        warnings,
        env,
        if_exists,
        force: request.force,
    })
}

/// Refuses what the managed policy keeps out, with Claude Code's words.
fn refuse_blocked(ctx: &Context, name: &str, entry: &Value) -> Result<(), Error> {
    let policy = Policy::load(&fsx::Disk, &ctx.locations.managed_dir)?;
    match policy.judge(name, &ServerEntry::from_value(entry.clone()), false) {
        None => Ok(()),
        Some(block) => Err(Error::failure(block.add_refusal(name)).with_hint(format!(
            "{}; ask your organisation's admins, or choose another server",
            block.message()
        ))),
    }
}

/// The entry of a project server gets placeholders for its literal
/// secrets, which go to `.env` (unless `allow_literal`); other scopes keep
/// the entry as given.
fn plan_entry(
    ctx: &Context,
    target: &Target,
    name: &str,
    entry: Value,
    allow_literal: bool,
    replace: bool,
    warnings: &mut Vec<String>,
) -> Result<(Value, EnvWrites), Error> {
    if target.scope != Scope::Project {
        return Ok((entry, EnvWrites::Nothing));
    }
    // Refused before any `.env` is touched.
    store::preflight(target)?;
    let candidate = Candidate {
        target: target.clone(),
        server: name.to_string(),
        entry: ServerEntry::from_value(entry.clone()),
        env_file: ctx.env_file_for(Scope::Project),
    };
    let plan = extraction_plan::plan(std::slice::from_ref(&candidate), &known_values(ctx)?)
        .map_err(plan_error)?;
    if plan.is_empty() {
        return Ok((entry, EnvWrites::Nothing));
    }
    if allow_literal {
        warnings.push(format!(
            "kept {} literal secret(s) in `{}`, a file meant to be committed",
            plan.moves.len(),
            target.path.display()
        ));
        return Ok((entry, EnvWrites::Nothing));
    }
    refuse_duplicate(ctx, target, name, replace)?;
    let changes: Vec<_> = plan
        .changes
        .iter()
        .flat_map(|(_, changes)| changes.iter().cloned())
        .collect();
    let placeholders = extraction_plan::apply_changes(name, &candidate.entry, &changes);
    let example = extraction_plan::example_variables(
        [(name, &placeholders)],
        &templates::all(&ctx.template_dirs).0,
    );
    Ok((
        placeholders.to_value(),
        EnvWrites::Extracted { plan, example },
    ))
}

/// A template rendered for `name`, its `vars` applied: secret values for a
/// dotenv file, the others as placeholder defaults; every variable
/// documented in `.env.example` for a project server.
fn plan_template(
    ctx: &Context,
    template: &Template,
    choice: Choice,
    name: &str,
    scope: Scope,
    vars: IndexMap<String, String>,
    literal: Literal,
) -> Result<(Value, EnvWrites), Error> {
    let rendered =
        templates::render(template, choice, name).map_err(|error| template_error(ctx, error))?;
    if literal == Literal::Refuse {
        let secret: Vec<String> = rendered
            .variables
            .iter()
            .filter(|variable| variable.secret && vars.contains_key(&variable.name))
            .map(|variable| format!("`{}`", variable.name))
            .collect();
        if !secret.is_empty() {
            return Err(Error::usage(format!(
                "{} {} secret: this tool never takes a secret value",
                secret.join(", "),
                if secret.len() == 1 { "is" } else { "are" }
            ))
            .with_hint("leave it out; the person sets it with `mcpenv onboard` (or in `.env`), never through the agent"));
        }
    }
    let mut entry = rendered.entry;
    let mut secrets = Vec::new();
    for (key, value) in vars {
        let Some(variable) = rendered
            .variables
            .iter()
            .find(|variable| variable.name == key)
        else {
            let names: Vec<String> = rendered
                .variables
                .iter()
                .map(|variable| format!("`{}`", variable.name))
                .collect();
            return Err(Error::usage(format!(
                "template `{}` has no variable `{key}`",
                template.name
            ))
            .with_hint(format!(
                "its variables: {}",
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            )));
        };
        if variable.secret {
            secrets.push((key, value));
        } else {
            if value.contains('}') {
                return Err(Error::usage(format!(
                    "the value of `{key}` cannot contain `}}` in a placeholder default"
                ))
                .with_hint("set it in `.env` instead"));
            }
            set_default(&mut entry, &key, &value);
        }
    }
    let example: Vec<ExampleLine> = if scope == Scope::Project {
        rendered
            .variables
            .iter()
            .map(|variable| ExampleLine {
                name: variable.name.clone(),
                comment: comment(variable, name),
                value: variable
                    .default
                    .clone()
                    .filter(|_| !variable.secret)
                    .unwrap_or_default(),
            })
            .collect()
    } else {
        Vec::new()
    };
    let env = if secrets.is_empty() && example.is_empty() {
        EnvWrites::Nothing
    } else {
        EnvWrites::Template { secrets, example }
    };
    Ok((entry, env))
}

/// Writes what `plan` decided: dotenv files first, then the config.
pub fn apply(ctx: &Context, plan: AddPlan) -> Result<AddReport, Error> {
    let mut progress = Progress::default();
    let mut moves = Vec::new();
    match &plan.env {
        EnvWrites::Nothing => {}
        EnvWrites::Extracted {
            plan: extraction,
            example,
        } => {
            progress = begin_writes(ctx, Some((extraction, example)), &[&plan.target.path])?;
            save_plan_env_with(ctx, extraction, example, plan.force, &mut progress)?;
            moves.clone_from(&extraction.moves);
        }
        EnvWrites::Template { secrets, example } => {
            if plan.scope == Scope::User {
                // A user server is used in every project: its secrets go
                // to the user's store, never into this repository's `.env`.
                envfiles::save_user_with(
                    &ctx.edit,
                    &ctx.user_env_file(),
                    &ctx.locations.state_dir,
                    secrets,
                    plan.force,
                    &mut progress,
                )
                .map_err(env_error)?;
            } else {
                save_project_env_with(ctx, secrets, example, plan.force, &mut progress)?;
            }
        }
    }
    let done = store::add_server(
        &ctx.locations,
        &ctx.edit,
        &plan.target,
        &plan.name,
        &plan.entry,
        plan.if_exists,
    )
    .map_err(|error| {
        already_exists_hint(ctx, error, &plan.name, plan.scope).interrupted(&progress)
    })?;
    let still_missing = if plan.template.is_some() {
        still_missing(ctx, &plan.entry)
    } else {
        Vec::new()
    };
    let mut report = AddReport::new(
        ctx,
        &plan.name,
        plan.scope,
        plan.transport,
        done,
        plan.warnings,
    );
    report.template = plan.template;
    report.still_missing = still_missing;
    report.stored = plan.entry;
    report.moves = moves;
    report.env_written = progress.into_written();
    Ok(report)
}

impl AddReport {
    /// The report for a finished write.
    pub fn new(
        ctx: &Context,
        name: &str,
        scope: Scope,
        transport: Transport,
        written: Written,
        warnings: Vec<String>,
    ) -> Self {
        Self {
            name: name.to_string(),
            scope,
            transport,
            file_shown: crate::ops::shown_paths::scope_file(ctx, scope, &written.path),
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
            approve_command: (scope == Scope::Project).then(|| ctx.approve_command(&[name])),
            stored: Value::Null,
        }
    }
}

/// A warning for each variable of a remote entry that Claude Code 2.1.332
/// sends empty (`Authorization: Bearer ${NPM_TOKEN}`), with a name it
/// would send.
fn blanked_warnings(name: &str, entry: &Value) -> Vec<String> {
    let entry = ServerEntry::from_value(entry.clone());
    if !entry.transport().is_remote() {
        return Vec::new();
    }
    let prefix = crate::config::expansion::variable_name_from(name).unwrap_or_default();
    let mut warned: Vec<String> = Vec::new();
    for (_, value) in entry.expandable_fields() {
        for reference in crate::config::expansion::references(value) {
            if crate::config::claude_code::blanked::blanked_toward_remote(&reference.name)
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
                crate::config::claude_code::blanked::remote_safe_name(&variable, &prefix)
            )
        })
        .collect()
}

/// Refuses an entry holding a literal secret, naming the placeholder that
/// takes its place (as `extract` would name it), in any scope.
fn refuse_literal_secrets(
    ctx: &Context,
    name: &str,
    scope: Scope,
    entry: &Value,
) -> Result<(), Error> {
    let candidate = Candidate {
        target: Target::for_scope(&ctx.locations, scope),
        server: name.to_string(),
        entry: ServerEntry::from_value(entry.clone()),
        env_file: ctx.env_file_for(scope),
    };
    let plan = extraction_plan::plan(std::slice::from_ref(&candidate), &known_values(ctx)?)
        .map_err(plan_error)?;
    let Some(first) = plan.moves.first() else {
        return Ok(());
    };
    let fields: Vec<String> = plan
        .moves
        .iter()
        .map(|moved| format!("`{}` (use `${{{}}}`)", moved.field, moved.variable))
        .collect();
    Err(Error::usage(format!(
        "a literal secret in {}: this tool never takes a secret value",
        fields.join(", ")
    ))
    .with_hint(format!(
        "put the placeholder in its place, e.g. `${{{}}}`, and let the person set the value with `mcpenv onboard` (or in `.env`)",
        first.variable
    )))
}

/// Fails before anything is written when `name` exists and may not be replaced.
fn refuse_duplicate(
    ctx: &Context,
    target: &Target,
    name: &str,
    replace: bool,
) -> Result<(), Error> {
    if replace {
        return Ok(());
    }
    let Some(document) = crate::config::json_files::load_document(&target.path, &[])? else {
        return Ok(());
    };
    let object_path: Vec<&str> = target.object_path.iter().map(String::as_str).collect();
    let exists = document
        .object_at(&object_path)
        .ok()
        .flatten()
        .is_some_and(|object| document.find_member(&object, name).is_some());
    if exists {
        let error = StoreError::AlreadyExists {
            name: name.to_string(),
            scope: target.scope,
            path: target.path.clone(),
        };
        return Err(already_exists_hint(ctx, error, name, target.scope));
    }
    Ok(())
}

/// Adds the "what now" to a duplicate-name error.
pub fn already_exists_hint(ctx: &Context, error: StoreError, name: &str, scope: Scope) -> Error {
    let duplicate = matches!(error, StoreError::AlreadyExists { .. });
    let error = Error::from(error);
    if duplicate {
        error.with_hint(format!(
            "replace it with `--replace`, or remove it first: `{}`",
            ctx.command(&["remove", name, "-s", scope.as_str()])
        ))
    } else {
        error
    }
}

/// Gives every `${key}` in `entry` the default `value`: `${key:-value}`.
fn set_default(entry: &mut Value, key: &str, value: &str) {
    match entry {
        Value::String(text) => {
            let replacement = format!("${{{key}:-{value}}}");
            let mut out = String::new();
            let mut copied = 0;
            for reference in crate::config::expansion::references(text) {
                if reference.name == key {
                    out.push_str(&text[copied..reference.span.start]);
                    out.push_str(&replacement);
                    copied = reference.span.end;
                }
            }
            out.push_str(&text[copied..]);
            *text = out;
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|item| set_default(item, key, value)),
        Value::Object(members) => members
            .values_mut()
            .for_each(|member| set_default(member, key, value)),
        _ => {}
    }
}

/// The `.env.example` comment of a template variable.
fn comment(variable: &TemplateVariable, server: &str) -> String {
    let mut lines = templates::described(variable);
    lines.push(format!("used by: {server}"));
    lines.join("\n")
}

/// Variables `entry` references that nothing sets and that have no default.
fn still_missing(ctx: &Context, entry: &Value) -> Vec<String> {
    let Ok(sources) = ctx.env_sources() else {
        return Vec::new();
    };
    let values = sources.file_values();
    let mut missing = Vec::new();
    for (_, text) in ServerEntry::from_value(entry.clone()).expandable_fields() {
        for reference in crate::config::expansion::references(text) {
            let set = ctx.process_env.contains_key(&reference.name)
                || values.contains_key(&reference.name)
                || sources
                    .settings
                    .iter()
                    .any(|(_, map)| map.contains_key(&reference.name));
            if !set && reference.default.is_none() && !missing.contains(&reference.name) {
                missing.push(reference.name);
            }
        }
    }
    missing
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::mechanics::edits::Edit;
    use crate::ops::testing::{context, previewed_then_written};

    #[test]
    fn a_stdio_source_is_stored_with_all_four_keys() {
        let (entry, transport, warnings) = build_entry(Source::Stdio {
            command: "npx".into(),
            args: vec!["-y".into(), "pkg".into()],
            env: IndexMap::from([("TOKEN".to_string(), "${TOKEN}".to_string())]),
        })
        .unwrap();
        assert_eq!(transport, Transport::Stdio);
        assert!(warnings.is_empty());
        assert_eq!(
            serde_json::to_string(&entry).unwrap(),
            r#"{"type":"stdio","command":"npx","args":["-y","pkg"],"env":{"TOKEN":"${TOKEN}"}}"#
        );
    }

    #[test]
    fn a_remote_source_gets_oauth_only_when_set() {
        let remote = |oauth| Source::Remote {
            transport: RemoteTransport::Sse,
            url: "https://x.test/sse".into(),
            headers: IndexMap::new(),
            oauth,
        };
        let (entry, transport, _) = build_entry(remote(OAuthClient::default())).unwrap();
        assert_eq!(transport, Transport::Sse);
        assert_eq!(
            serde_json::to_string(&entry).unwrap(),
            r#"{"type":"sse","url":"https://x.test/sse"}"#
        );
        let (entry, _, _) = build_entry(remote(OAuthClient {
            client_id: Some("cid".into()),
            callback_port: Some(8080),
        }))
        .unwrap();
        assert_eq!(
            serde_json::to_string(&entry).unwrap(),
            r#"{"type":"sse","url":"https://x.test/sse","oauth":{"clientId":"cid","callbackPort":8080}}"#
        );
    }

    #[test]
    fn a_json_source_is_normalised_and_unknown_keys_are_named() {
        let (entry, transport, warnings) = build_entry(Source::Json(serde_json::json!({
            "command": "sh", "mine": 1
        })))
        .unwrap();
        assert_eq!(transport, Transport::Stdio);
        assert_eq!(entry["command"], "sh");
        assert_eq!(entry["mine"], 1, "kept");
        assert!(
            warnings.iter().any(|warning| warning.contains("`mine`")),
            "{warnings:?}"
        );
        let error = build_entry(Source::Json(serde_json::json!([1]))).unwrap_err();
        assert!(
            error.message().contains("invalid server entry"),
            "{}",
            error.message()
        );
        assert_eq!(error.kind(), crate::ops::error::Kind::Usage);
    }

    #[test]
    fn an_add_against_a_preview_yields_each_change_and_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = context(dir.path(), Edit::plain());
        let token = "ghp_Zq8Rk2VbN4mXw7Ty1Lp9Hs3Dj6Fc0Ga5Ue2Q";
        let entry = json!({"command": "npx", "args": ["server"], "env": {"GITHUB_TOKEN": token}});
        let request = AddRequest {
            name: "gh".to_string(),
            scope: Scope::Project,
            source: Source::Json(entry),
            replace: false,
            literal: Literal::Move,
            force: false,
            warnings: Vec::new(),
        };
        let plan = plan(&ctx, request).unwrap();
        let changes = previewed_then_written(dir.path(), &ctx, |ctx| {
            apply(ctx, plan.clone()).unwrap();
        });
        let paths: Vec<&str> = changes.iter().map(|(path, _)| path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "project/.gitignore",
                "project/.env",
                "project/.env.example",
                "project/.mcp.json"
            ]
        );
        assert!(changes.iter().all(|(_, change)| change.before.is_none()));
        let config = changes[3].1.after.as_deref().unwrap();
        assert!(config.contains("${GITHUB_TOKEN}") && !config.contains(token));
    }
}
