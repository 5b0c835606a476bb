//! `mcpenv templates list|show`, and `mcpenv add NAME --template T`: server
//! templates in the MCP Registry's `server.json` format.

use std::io::{self, Write};

use indexmap::IndexMap;

use crate::cli::args::{AddArgs, TemplatesListArgs, TemplatesShowArgs};
use crate::cli::error::{CliError, Kind};
use crate::cli::render::{
    BOLD, Cell, DIM, LastColumn, Report, display_width, shown, table_fitted, warning, write_hanging,
};
use crate::cli::resolve::Ctx;
use crate::config::scope::Scope;
use crate::ops::add::{self, AddReport, AddRequest, Literal, Source};
use crate::ops::list_templates::{RemoteLabel, TemplateList, TemplateSummary, list_templates};
use crate::ops::show_template::{TemplateDetails, show_template};
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
                    Cell::styled(&template.description, DIM),
                ]
            })
            .collect();
        // What each template installs goes under it, one line per
        // `--package N` / `--remote N`: those do not fit beside it.
        table_fitted(
            out,
            &["NAME", "SOURCE", "DESCRIPTION"],
            &rows,
            LastColumn::Wraps,
            |out, index| write_installs(out, &self.templates[index]),
        )
    }

    fn write_status(&self, err: &mut dyn Write) -> io::Result<()> {
        for message in &self.warnings {
            warning(err, message)?;
        }
        Ok(())
    }
}

/// One line per way to install `template`: `--package N` and what it
/// runs, `--remote N` and what tells that remote from the others.
fn write_installs(out: &mut dyn Write, template: &TemplateSummary) -> io::Result<()> {
    let packages = template.install.len() - template.remotes.len();
    let labels: Vec<(String, String)> = template.install[..packages]
        .iter()
        .enumerate()
        .map(|(index, install)| (format!("--package {}", index + 1), install.clone()))
        .chain(
            template
                .remotes
                .iter()
                .map(|remote| (remote.choice.clone(), remote_label(remote))),
        )
        .collect();
    let width = labels
        .iter()
        .map(|(choice, _)| display_width(choice))
        .max()
        .unwrap_or(0);
    for (choice, label) in &labels {
        let lead = format!("  {choice:width$}  ");
        write_hanging(
            out,
            &lead,
            width + 4,
            &shown(label),
            anstyle::Style::new(),
            4,
        )?;
    }
    Ok(())
}

/// A remote as its transport, its URL and what tells it from the others.
fn remote_label(remote: &RemoteLabel) -> String {
    format!(
        "{} {} ({})",
        remote.transport,
        remote.url,
        differences(remote)
    )
}

/// What tells this remote from the others, in words: `header
/// Authorization, needs TOKEN` or `no headers`.
fn differences(remote: &RemoteLabel) -> String {
    let mut parts = Vec::new();
    match remote.headers.as_slice() {
        [] => parts.push("no headers".to_string()),
        [one] => parts.push(format!("header {one}")),
        many => parts.push(format!("headers {}", many.join(", "))),
    }
    let names = |required: bool| -> Vec<&str> {
        remote
            .variables
            .iter()
            .filter(|variable| variable.required == required)
            .map(|variable| variable.name.as_str())
            .collect()
    };
    let needed = names(true);
    if !needed.is_empty() {
        parts.push(format!("needs {}", needed.join(", ")));
    }
    let optional = names(false);
    if !optional.is_empty() {
        parts.push(format!("optional {}", optional.join(", ")));
    }
    parts.join(", ")
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
        write_hanging(
            out,
            "  ",
            2,
            &shown(&summary.description),
            anstyle::Style::new(),
            2,
        )?;
        for (index, rendering) in self.renders.iter().enumerate() {
            writeln!(out)?;
            // Packages first, then remotes, as `templates list` numbers them.
            let default = if index == 0 { " (default)" } else { "" };
            let lead = format!("{BOLD}{}{BOLD:#}{default}", rendering.choice);
            let remote = summary
                .remotes
                .iter()
                .find(|remote| remote.choice == rendering.choice);
            match remote {
                Some(remote) => write_hanging(
                    out,
                    &format!("{lead}  "),
                    display_width(&rendering.choice) + display_width(default) + 2,
                    &shown(&remote_label(remote)),
                    anstyle::Style::new(),
                    2,
                )?,
                None => writeln!(out, "{lead}")?,
            }
            match (&rendering.entry, &rendering.error) {
                (Some(entry), _) => {
                    let text = crate::mechanics::document::pretty(entry, "  ", "  ");
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
            let plain = anstyle::Style::new();
            if let Some(description) = &variable.description {
                write_hanging(out, "    ", 4, &shown(description), plain, 4)?;
            }
            if let Some(how) = &variable.how_to_get {
                write_hanging(
                    out,
                    "    ",
                    4,
                    &format!("Get one: {}", shown(how)),
                    plain,
                    4,
                )?;
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
            warnings: Vec::new(),
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
