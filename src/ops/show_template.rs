//! One template in detail, as `mcpenv templates show` shows it: the entry
//! each of its packages and remotes renders to, and its variables.

use serde::Serialize;
use serde_json::Value;

use crate::ops::list_templates::TemplateSummary;
use crate::ops::{Context, Error, Kind};
use crate::templates::{self, Choice, TemplateError, TemplateVariable};

/// One template in detail.
#[derive(Debug, Serialize)]
pub struct TemplateDetails {
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

/// One template in detail: each entry it renders to, and its variables.
pub fn show_template(ctx: &Context, name: &str) -> Result<TemplateDetails, Error> {
    let template =
        templates::find(&ctx.template_dirs, name).map_err(|error| template_error(ctx, error))?;
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
    Ok(TemplateDetails {
        summary: TemplateSummary::new(&template),
        renders,
        variables: templates::declared_variables(&template, &template.name),
    })
}

/// The template whose name is nearest `name`, when one is close.
pub fn similar_template(ctx: &Context, name: &str) -> Option<String> {
    let names: Vec<String> = templates::all(&ctx.template_dirs)
        .0
        .into_iter()
        .map(|template| template.name)
        .collect();
    crate::ops::names::closest(&names, name).map(str::to_string)
}

/// The error for a template problem, with what to do about it.
pub fn template_error(ctx: &Context, error: TemplateError) -> Error {
    let hint = match &error {
        TemplateError::NotFound(name) => match similar_template(ctx, name) {
            Some(close) => format!(
                "did you mean `{close}`? `{}` lists them all",
                ctx.command(&["templates", "list"])
            ),
            None => format!(
                "see the templates with `{}`, or pass a `server.json` file",
                ctx.command(&["templates", "list"])
            ),
        },
        TemplateError::Malformed { .. } => {
            "fix that field; the format is the MCP Registry's server.json".to_string()
        }
        TemplateError::Read { .. } => "check the path".to_string(),
        TemplateError::NoSuchChoice { name, .. } => format!(
            "see what it offers with `{}`",
            ctx.command(&["templates", "show", name])
        ),
        TemplateError::Unsupported { name, .. } => format!(
            "see what it offers with `{}`",
            ctx.command(&["templates", "show", name])
        ),
    };
    // Even `--remote 2` depends on the template's file, not on the arguments alone.
    Error::new(Kind::Failure, Box::new(error)).with_hint(hint)
}
