//! The tools that write: `add_server` and `share_server`, over the use
//! cases [`ops::add`] and [`ops::share`], every one behind the human gate
//! ([`super::gate`]), whatever the scope. The agent never sends a
//! secret value: a literal secret in its arguments is refused with the
//! placeholder to put in its place.

use indexmap::IndexMap;
use rmcp::model::{CallToolResult, JsonObject};
use serde_json::{Value, json};

use super::fence::fence;
use crate::config::scope::Scope;
use crate::mechanics::diff::FileChange;
use crate::ops::add::{self, AddRequest, Literal, OAuthClient, RemoteTransport, Source};
use crate::ops::secret_stores::SecretStore;
use crate::ops::share::{self, ShareRequest};
use crate::ops::{self, Context, Error};
use crate::templates::{self, Choice};

/// Carries out a decided write and says what was done.
pub type Apply = Box<dyn FnOnce(&Context) -> Result<Value, Error> + Send>;

/// A write, decided: what to show and how to carry it out.
pub struct Decided {
    /// One sentence: what will be done.
    pub summary: String,
    /// Every file that changes.
    pub changes: Vec<FileChange>,
    /// Writes it and says what was done.
    pub apply: Apply,
}

/// Decides `add_server` for `arguments` (already valid for its schema).
pub fn decide_add(ctx: &Context, arguments: &JsonObject) -> Result<Decided, Error> {
    let text = |name: &str| arguments.get(name).and_then(Value::as_str);
    let name = text("name").unwrap_or_default().to_string();
    let scope = match text("scope").unwrap_or("project") {
        "local" => Scope::Local,
        "user" => Scope::User,
        _ => Scope::Project,
    };
    let strings = |name: &str| crate::config::model::string_list(arguments.get(name));
    let pairs = |name: &str| -> IndexMap<String, String> {
        arguments
            .get(name)
            .and_then(Value::as_object)
            .map(|object| {
                object
                    .iter()
                    .filter_map(|(key, value)| Some((key.clone(), value.as_str()?.to_string())))
                    .collect()
            })
            .unwrap_or_default()
    };
    let sources = ["template", "command", "url"]
        .iter()
        .filter(|source| arguments.contains_key(**source))
        .count();
    if sources != 1 {
        return Err(Error::usage(
            "give exactly one of `template`, `command` or `url`",
        )
        .with_hint("`template` for a known server (see `templates` in mcpenv's CLI), `command` (with `args`) for a local stdio server, `url` for a remote one"));
    }
    let source = if let Some(template) = text("template") {
        template_source(ctx, template, arguments, &pairs("vars"))?
    } else if let Some(command) = text("command") {
        if arguments.contains_key("headers") || arguments.contains_key("transport") {
            return Err(Error::usage(
                "`headers` and `transport` go with `url`, not `command`",
            ));
        }
        // Variables by name only: each is handed on as its placeholder.
        let env: IndexMap<String, String> = strings("env_variables")
            .into_iter()
            .map(|variable| {
                let placeholder = format!("${{{variable}}}");
                (variable, placeholder)
            })
            .collect();
        Source::Stdio {
            command: command.to_string(),
            args: strings("args"),
            env,
        }
    } else {
        if arguments.contains_key("args") || arguments.contains_key("env_variables") {
            return Err(Error::usage(
                "`args` and `env_variables` go with `command`, not `url`",
            )
            .with_hint("a remote server gets its credentials in `headers`, e.g. `{\"Authorization\": \"Bearer ${API_TOKEN}\"}`"));
        }
        Source::Remote {
            transport: if text("transport") == Some("sse") {
                RemoteTransport::Sse
            } else {
                RemoteTransport::Http
            },
            url: text("url").unwrap_or_default().to_string(),
            headers: pairs("headers"),
            oauth: OAuthClient::default(),
        }
    };
    let plan = add::plan(
        ctx,
        AddRequest {
            name: name.clone(),
            scope,
            source,
            replace: false,
            // The agent never sends a secret value.
            literal: Literal::Refuse,
            force: false,
            warnings: Vec::new(),
        },
    )?;
    let changes = ops::previewed(ctx, |ctx| add::apply(ctx, plan.clone()))?;
    let mut summary = format!(
        "Add the {} MCP server `{name}` to {scope} scope ({}).",
        plan.transport,
        crate::ops::shown_paths::scope_file(ctx, scope, &plan.target.path)
    );
    // What the CLI warns about, the person reads before agreeing.
    for warning in &plan.warnings {
        summary.push_str(&format!("\nwarning: {warning}"));
    }
    Ok(Decided {
        summary,
        changes,
        apply: Box::new(move |ctx: &Context| {
            let report = add::apply(ctx, plan)?;
            let mut report = json!({
                "name": report.name,
                "scope": report.scope,
                "transport": report.transport,
                "file": report.file,
                "warnings": report.warnings,
                "still_missing": report.still_missing,
                "approve_command": (report.scope == Scope::Project)
                    .then(|| ctx.approve_command(&[&report.name])),
            });
            fence(
                &mut report,
                &[
                    "name",
                    "file",
                    "warnings",
                    "still_missing",
                    "approve_command",
                ],
            );
            Ok(report)
        }),
    })
}

/// The template `name` (a name, never a path: the tool reads no file it
/// is pointed at), with `vars` (values of its secret variables are refused
/// by the use case: the person sets those).
fn template_source(
    ctx: &Context,
    name: &str,
    arguments: &JsonObject,
    vars: &IndexMap<String, String>,
) -> Result<Source, Error> {
    if name.contains('/') || name.ends_with(".json") {
        return Err(Error::usage(format!(
            "`template` takes a template's name, not a file: `{name}`"
        )));
    }
    let template = templates::find(&ctx.template_dirs, name)
        .map_err(|error| ops::hints::template_error(ctx, error))?;
    let index = |name: &str| {
        arguments
            .get(name)
            .and_then(Value::as_u64)
            .and_then(|index| usize::try_from(index).ok())
    };
    let choice = match (index("package"), index("remote")) {
        (Some(package), _) => Choice::Package(package),
        (None, Some(remote)) => Choice::Remote(remote),
        (None, None) => Choice::Default,
    };
    Ok(Source::Template {
        template: Box::new(template),
        choice,
        vars: vars.clone(),
    })
}

/// Decides `share_server` for `arguments` (already valid for its schema).
pub fn decide_share(ctx: &Context, arguments: &JsonObject) -> Result<Decided, Error> {
    let name = arguments
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let from = match arguments.get("from").and_then(Value::as_str) {
        Some("local") => Some(Scope::Local),
        Some("user") => Some(Scope::User),
        _ => None,
    };
    let keep = arguments
        .get("keep")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let store = match arguments.get("secrets_to").and_then(Value::as_str) {
        Some("keychain") => SecretStore::Keychain,
        _ => SecretStore::Dotenv,
    };
    let plan = share::plan(
        ctx,
        &ShareRequest {
            name: name.clone(),
            from,
            keep,
            force: false,
            store,
        },
    )?;
    let changes = ops::previewed(ctx, |ctx| share::apply(ctx, plan.clone()))?;
    let moved = plan.moves().len();
    let into = match store {
        SecretStore::Dotenv => "`.env` (gitignored)",
        SecretStore::Keychain => "your keychain (named in the gitignored `.env`)",
    };
    let summary = format!(
        "Share the MCP server `{name}` from {} scope with the team: it goes into `{}`{}{}.",
        plan.from,
        crate::ops::shown_paths::shown_path(ctx, plan.project_file()),
        match moved {
            0 => String::new(),
            1 => format!(", its secret moved into {into} and replaced by a placeholder"),
            count =>
                format!(", its {count} secrets moved into {into} and replaced by placeholders"),
        },
        if keep {
            "; the private copy stays"
        } else {
            "; the private copy is removed"
        },
    );
    Ok(Decided {
        summary,
        changes,
        apply: Box::new(move |ctx: &Context| {
            let report = share::apply(ctx, plan)?;
            let variables: Vec<&str> = report
                .moves
                .iter()
                .map(|moved| moved.variable.as_str())
                .collect();
            let mut report = json!({
                "name": report.name,
                "from": report.from,
                "file": report.file,
                "kept": report.kept,
                "moved_variables": variables,
                "written": report.written,
                "approve_command": report.approve_command,
            });
            fence(
                &mut report,
                &[
                    "name",
                    "file",
                    "written",
                    "moved_variables",
                    "approve_command",
                ],
            );
            Ok(report)
        }),
    })
}

/// The result of a write that was done.
pub fn written(
    summary: &str,
    changes: Vec<super::gate::ShownChange>,
    report: Value,
) -> CallToolResult {
    let text = "Done: the change was written (what it was: `untrusted.summary`; each file's diff: `changes[].untrusted.diff`; what was done: `report`)".to_string();
    super::structured(
        json!({
            "status": "written",
            "changes": super::shown_changes(changes),
            "report": report,
            "untrusted": {"note": super::fence::NOTE, "summary": summary},
        }),
        text,
        false,
    )
}
