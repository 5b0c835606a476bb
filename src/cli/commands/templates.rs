//! `mcpenv templates list|show`, and `mcpenv add NAME --template T`: server
//! templates in the MCP Registry's `server.json` format.

use std::io::{self, Write};

use indexmap::IndexMap;
use serde_json::Value;

use crate::cli::args::{AddArgs, TemplatesListArgs, TemplatesShowArgs};
use crate::cli::commands::add::{AddReport, already_exists_hint};
use crate::cli::error::{CliError, Kind};
use crate::cli::render::{BOLD, Cell, DIM, Report, table, warning};
use crate::cli::resolve::Ctx;
use crate::model::ServerEntry;
use crate::ops::list_templates::{TemplateList, list_templates};
use crate::ops::show_template::{TemplateDetails, show_template};
use crate::ops::writes::save_project_env;
use crate::scope::Scope;
use crate::store::{self, IfExists, Target};
use crate::templates::{self, Choice, Origin, TemplateError, TemplateVariable};

pub use crate::ops::show_template::{similar_template, template_error};

fn origin_word(origin: &Origin) -> &'static str {
    match origin {
        Origin::Embedded => "embedded",
        Origin::User(_) => "user",
        Origin::Project(_) => "project",
        Origin::File(_) => "file",
    }
}

impl Report for TemplateList {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        let rows: Vec<Vec<Cell>> = self
            .templates
            .iter()
            .map(|template| {
                vec![
                    Cell::styled(&template.name, BOLD),
                    Cell::plain(origin_word(&template.origin)),
                    Cell::plain(template.install.join(", ")),
                    Cell::styled(&template.description, DIM),
                ]
            })
            .collect();
        table(out, &["NAME", "SOURCE", "INSTALLS", "DESCRIPTION"], &rows)
    }

    fn write_status(&self, err: &mut dyn Write) -> io::Result<()> {
        for message in &self.warnings {
            warning(err, message)?;
        }
        Ok(())
    }
}

/// Runs `mcpenv templates list`.
pub fn list(ctx: &Ctx, _args: &TemplatesListArgs) -> Result<TemplateList, CliError> {
    Ok(list_templates(ctx))
}

impl Report for TemplateDetails {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        let summary = &self.summary;
        let title = summary.title.as_deref().unwrap_or(&summary.name);
        writeln!(
            out,
            "{BOLD}{title}{BOLD:#} ({} {})",
            summary.name, summary.version
        )?;
        writeln!(out, "  {}", summary.description)?;
        for rendering in &self.renders {
            writeln!(out)?;
            writeln!(
                out,
                "{BOLD}{}{BOLD:#}{}",
                rendering.choice,
                if rendering.choice.ends_with(" 1")
                    && self
                        .renders
                        .first()
                        .is_some_and(|first| std::ptr::eq(first, rendering))
                {
                    " (default)"
                } else {
                    ""
                }
            )?;
            match (&rendering.entry, &rendering.error) {
                (Some(entry), _) => {
                    let text = crate::document::pretty(entry, "  ", "  ");
                    writeln!(out, "  {text}")?;
                }
                (None, Some(error)) => writeln!(out, "  {DIM}{error}{DIM:#}")?,
                (None, None) => {}
            }
        }
        if !self.variables.is_empty() {
            writeln!(out)?;
            writeln!(out, "{BOLD}Variables{BOLD:#}")?;
        }
        for variable in &self.variables {
            let mut traits = Vec::new();
            if variable.required {
                traits.push("required".to_string());
            }
            if variable.secret {
                traits.push("secret".to_string());
            }
            if let Some(default) = &variable.default {
                traits.push(format!("default `{default}`"));
            }
            writeln!(
                out,
                "  {}  {DIM}{}{DIM:#}",
                variable.name,
                traits.join(", ")
            )?;
            if let Some(description) = &variable.description {
                writeln!(out, "    {description}")?;
            }
            if let Some(how) = &variable.how_to_get {
                writeln!(out, "    Get one: {how}")?;
            }
        }
        Ok(())
    }
}

/// Runs `mcpenv templates show`.
pub fn show(ctx: &Ctx, args: &TemplatesShowArgs) -> Result<TemplateDetails, CliError> {
    show_template(ctx, &args.name)
}

/// `mcpenv add NAME --template T`: renders the template, writes `--var`
/// secrets to `.env` and documents every variable in `.env.example` (project
/// scope), then writes the entry and says what is still missing.
pub fn add_from_template(
    ctx: &Ctx,
    args: &AddArgs,
    name: &str,
    template_name: &str,
) -> Result<AddReport, CliError> {
    let template = match templates::find(&ctx.template_dirs, template_name) {
        Ok(template) => template,
        Err(TemplateError::NotFound(missing)) => {
            let error = TemplateError::NotFound(missing.clone());
            let Some(close) = similar_template(ctx, &missing) else {
                return Err(template_error(ctx, error));
            };
            let mut words = vec!["add".to_string()];
            words.extend(crate::cli::commands::add_words::flag_words(args, &args.env));
            words.extend([name.to_string(), "--template".to_string(), close]);
            let words: Vec<&str> = words.iter().map(String::as_str).collect();
            return Err(CliError::new(Kind::Failure, Box::new(error))
                .with_hint(format!("did you mean `{}`?", ctx.command(&words))));
        }
        Err(error) => return Err(template_error(ctx, error)),
    };
    let choice = match (args.package, args.remote) {
        (Some(index), _) => Choice::Package(index),
        (None, Some(index)) => Choice::Remote(index),
        (None, None) => Choice::Default,
    };
    let rendered =
        templates::render(&template, choice, name).map_err(|error| template_error(ctx, error))?;
    let mut entry = rendered.entry;
    let mut secrets = Vec::new();
    for (key, value) in parse_vars(&args.vars)? {
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
            return Err(CliError::usage(format!(
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
                return Err(CliError::usage(format!(
                    "the value of `{key}` cannot contain `}}` in a placeholder default"
                ))
                .with_hint("set it in `.env` instead"));
            }
            set_default(&mut entry, &key, &value);
        }
    }
    let scope = Scope::from(args.scope);
    let target = Target::for_scope(&ctx.locations, scope);
    let example: Vec<crate::dotenv::ExampleLine> = if scope == Scope::Project {
        rendered
            .variables
            .iter()
            .map(|variable| crate::dotenv::ExampleLine {
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
    let mut env_written = Vec::new();
    if scope == Scope::User {
        // A user server is used in every project: its secrets go to the
        // user's store, never into this repository's `.env`.
        let mut progress = crate::store::Progress::default();
        crate::envfiles::save_user_with(
            &ctx.user_env_file(),
            &ctx.locations.state_dir,
            &secrets,
            args.force,
            &mut progress,
        )
        .map_err(crate::ops::extraction::env_error)?;
        env_written = progress.into_written();
    } else if !secrets.is_empty() || !example.is_empty() {
        env_written = save_project_env(ctx, &secrets, &example, args.force)?;
    }
    let if_exists = if args.replace {
        IfExists::Replace
    } else {
        IfExists::Fail
    };
    let written = store::add_server(&ctx.locations, &target, name, &entry, if_exists)
        .map_err(|error| already_exists_hint(ctx, error, name, scope))?;
    let transport = ServerEntry::from_value(entry.clone()).transport();
    let mut report = AddReport::new(ctx, name, scope, transport, written, Vec::new());
    report.template = Some(template.name.clone());
    report.env_written = env_written;
    report.still_missing = still_missing(ctx, &entry);
    Ok(report)
}

/// `KEY=VALUE` pairs of `--var`.
fn parse_vars(pairs: &[String]) -> Result<IndexMap<String, String>, CliError> {
    let mut vars = IndexMap::new();
    for pair in pairs {
        match pair.split_once('=') {
            Some((key, value)) if !key.is_empty() => {
                vars.insert(key.to_string(), value.to_string());
            }
            _ => {
                return Err(
                    CliError::usage(format!("invalid `--var {pair}`: expected KEY=VALUE"))
                        .with_hint(
                            "give one variable per flag: `--var KEY1=value1 --var KEY2=value2`",
                        ),
                );
            }
        }
    }
    Ok(vars)
}

/// Makes `value` the default of every `${key}` / `${key:-…}` in `entry`.
fn set_default(entry: &mut Value, key: &str, value: &str) {
    match entry {
        Value::String(text) => {
            let replacement = format!("${{{key}:-{value}}}");
            let mut out = String::new();
            let mut copied = 0;
            for reference in crate::placeholder::references(text) {
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

/// The `.env.example` comment for a template variable.
fn comment(variable: &TemplateVariable, server: &str) -> String {
    let mut lines = crate::templates::described(variable);
    lines.push(format!("used by: {server}"));
    lines.join("\n")
}

/// Variables `entry` references that nothing sets and that have no default.
fn still_missing(ctx: &Ctx, entry: &Value) -> Vec<String> {
    let Ok(sources) = ctx.env_sources() else {
        return Vec::new();
    };
    let values = sources.file_values();
    let mut missing = Vec::new();
    for (_, text) in ServerEntry::from_value(entry.clone()).expandable_fields() {
        for reference in crate::placeholder::references(text) {
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
