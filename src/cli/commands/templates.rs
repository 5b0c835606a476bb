//! `mcpenv templates list|show`, and `mcpenv add NAME --template T`: server
//! templates in the MCP Registry's `server.json` format.

use std::io::{self, Write};

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::Value;

use crate::cli::args::{AddArgs, TemplatesListArgs, TemplatesShowArgs};
use crate::cli::error::{CliError, Kind};
use crate::cli::render::{BOLD, Cell, DIM, Report, table, warning};
use crate::cli::resolve::Ctx;
use crate::ops::add::{self, AddReport, AddRequest, Source};
use crate::ops::hints::{similar_template, template_error};
use crate::scope::Scope;
use crate::templates::{self, Choice, Origin, Template, TemplateError, TemplateVariable};

/// Every template.
#[derive(Debug, Serialize)]
pub struct ListReport {
    /// The templates, by name.
    pub templates: Vec<TemplateSummary>,
    /// Templates that could not be read.
    pub warnings: Vec<String>,
}

/// One template in a list.
#[derive(Debug, Serialize)]
pub struct TemplateSummary {
    /// The name to use with `--template`.
    pub name: String,
    /// Where it comes from.
    pub origin: Origin,
    /// Its display name.
    pub title: Option<String>,
    /// One line about it.
    pub description: String,
    /// Its version.
    pub version: String,
    /// How it can be installed: `npm @x/y`, `oci image`, `remote https://…`.
    pub install: Vec<String>,
}

impl TemplateSummary {
    fn new(template: &Template) -> Self {
        let spec = &template.server;
        let install = spec
            .packages
            .iter()
            .map(|package| format!("{} {}", package.registry_type, package.identifier))
            .chain(
                spec.remotes
                    .iter()
                    .map(|remote| format!("remote {}", remote.url)),
            )
            .collect();
        Self {
            name: template.name.clone(),
            origin: template.origin.clone(),
            title: spec.title.clone(),
            description: spec.description.clone(),
            version: spec.version.clone(),
            install,
        }
    }
}

fn origin_word(origin: &Origin) -> &'static str {
    match origin {
        Origin::Embedded => "embedded",
        Origin::User(_) => "user",
        Origin::Project(_) => "project",
        Origin::File(_) => "file",
    }
}

impl Report for ListReport {
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
pub fn list(ctx: &Ctx, _args: &TemplatesListArgs) -> Result<ListReport, CliError> {
    let (found, errors) = templates::all(&ctx.template_dirs);
    Ok(ListReport {
        templates: found.iter().map(TemplateSummary::new).collect(),
        warnings: errors.iter().map(ToString::to_string).collect(),
    })
}

/// One template in detail.
#[derive(Debug, Serialize)]
pub struct ShowReport {
    /// The summary.
    #[serde(flatten)]
    pub summary: TemplateSummary,
    /// The entry each choice renders to, as `--package N` / `--remote N`.
    pub renders: Vec<Rendering>,
    /// Every variable, with what the template says about it.
    pub variables: Vec<TemplateVariable>,
}

/// One rendering of a template.
#[derive(Debug, Serialize)]
pub struct Rendering {
    /// `--package 1`, `--remote 1`…
    pub choice: String,
    /// The entry, or why it cannot be rendered.
    pub entry: Option<Value>,
    /// Why it cannot be rendered.
    pub error: Option<String>,
}

impl Report for ShowReport {
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
pub fn show(ctx: &Ctx, args: &TemplatesShowArgs) -> Result<ShowReport, CliError> {
    let template = templates::find(&ctx.template_dirs, &args.name)
        .map_err(|error| template_error(ctx, error))?;
    let choices = (1..=template.server.packages.len())
        .map(|index| (Choice::Package(index), format!("--package {index}")))
        .chain(
            (1..=template.server.remotes.len())
                .map(|index| (Choice::Remote(index), format!("--remote {index}"))),
        );
    let renders = choices
        .map(
            |(choice, label)| match templates::render(&template, choice, &template.name) {
                Ok(rendered) => Rendering {
                    choice: label,
                    entry: Some(rendered.entry),
                    error: None,
                },
                Err(error) => Rendering {
                    choice: label,
                    entry: None,
                    error: Some(error.to_string()),
                },
            },
        )
        .collect();
    Ok(ShowReport {
        summary: TemplateSummary::new(&template),
        renders,
        variables: templates::declared_variables(&template, &template.name),
    })
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
    let plan = add::plan(
        ctx,
        AddRequest {
            name: name.to_string(),
            scope: Scope::from(args.scope),
            source: Source::Template {
                template: Box::new(template),
                choice,
                vars: parse_vars(&args.vars)?,
            },
            replace: args.replace,
            allow_literal: args.allow_literal,
            force: args.force,
        },
    )?;
    add::apply(ctx, plan)
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
