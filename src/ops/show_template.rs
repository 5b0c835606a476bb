//! One template in detail, as `mcpenv templates show` shows it: the entry
//! each of its packages and remotes renders to, and its variables.

use serde::Serialize;
use serde_json::Value;

use crate::ops::hints::template_error;
use crate::ops::list_templates::TemplateSummary;
use crate::ops::{Context, Error};
use crate::templates::{self, Choice, TemplateVariable};

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
