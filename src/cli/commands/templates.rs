//! `mcpenv templates list|show`, and `mcpenv add NAME --template T`: server
//! templates in the MCP Registry's `server.json` format.

use std::io::{self, Write};

use indexmap::IndexMap;

use crate::cli::args::{AddArgs, TemplatesListArgs, TemplatesShowArgs};
use crate::cli::error::{CliError, Kind};
use crate::cli::render::{BOLD, Cell, DIM, Report, table, warning};
use crate::cli::resolve::Ctx;
use crate::ops::add::{self, AddReport, AddRequest, Literal, Source};
use crate::ops::list_templates::{TemplateList, list_templates};
use crate::ops::show_template::{TemplateDetails, show_template};
use crate::scope::Scope;
use crate::templates::{self, Choice, Origin, TemplateError};

use crate::ops::hints::{similar_template, template_error};

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
            literal: if args.allow_literal {
                Literal::Keep
            } else {
                Literal::Move
            },
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
