//! Every template, from the project's and the user's template directories
//! and those built in: what `mcpenv templates list` shows.

use serde::Serialize;

use crate::ops::Context;
use crate::templates::{self, Origin, Template};

/// Every template.
#[derive(Debug, Serialize)]
pub struct TemplateList {
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
    /// The summary of `template`.
    pub fn new(template: &Template) -> Self {
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

/// Lists every template; those that cannot be read are warnings.
pub fn list_templates(ctx: &Context) -> TemplateList {
    let (found, errors) = templates::all(&ctx.template_dirs);
    TemplateList {
        templates: found.iter().map(TemplateSummary::new).collect(),
        warnings: errors.iter().map(ToString::to_string).collect(),
    }
}
