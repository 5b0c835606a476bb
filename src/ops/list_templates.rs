//! Every template, from the project's and the user's template directories
//! and those built in: what `mcpenv templates list` shows.

use serde::Serialize;

use crate::ops::Context;
use crate::templates::{self, Choice, Origin, Template};

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
    /// Each hosted endpoint, with what tells it from the others.
    pub remotes: Vec<RemoteLabel>,
}

/// One remote of a template, as `--remote N` renders it: enough to tell
/// two remotes at one URL apart (one signs in, one sends a token).
#[derive(Debug, Serialize)]
pub struct RemoteLabel {
    /// `--remote N`.
    pub choice: String,
    /// `streamable-http` or `sse`.
    pub transport: String,
    /// The URL as the template gives it (`{name}` parts still to fill).
    pub url: String,
    /// The headers the entry sends.
    pub headers: Vec<String>,
    /// The variables the entry needs (`${NAME}` in its URL and headers).
    pub variables: Vec<LabelVariable>,
}

/// A variable a remote's entry uses.
#[derive(Debug, Serialize)]
pub struct LabelVariable {
    /// `${NAME}` as the entry writes it.
    pub name: String,
    /// Whether the server needs it.
    pub required: bool,
}

impl RemoteLabel {
    /// The labels of every remote of `template`, each rendered as `add
    /// --template` would write it (so names are the entry's own).
    pub fn all(template: &Template) -> Vec<Self> {
        template
            .server
            .remotes
            .iter()
            .enumerate()
            .map(|(index, remote)| {
                let rendered =
                    templates::render(template, Choice::Remote(index + 1), &template.name);
                let (headers, variables) = match rendered {
                    Ok(rendered) => (
                        rendered.entry["headers"]
                            .as_object()
                            .map(|headers| headers.keys().cloned().collect())
                            .unwrap_or_default(),
                        rendered
                            .variables
                            .into_iter()
                            .map(|variable| LabelVariable {
                                name: variable.name,
                                required: variable.required,
                            })
                            .collect(),
                    ),
                    // `templates show` says why; the label keeps the rest.
                    Err(_) => (Vec::new(), Vec::new()),
                };
                Self {
                    choice: format!("--remote {}", index + 1),
                    transport: remote.kind.clone(),
                    url: remote.url.clone(),
                    headers,
                    variables,
                }
            })
            .collect()
    }
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
            remotes: RemoteLabel::all(template),
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
