//! Onboarding: the variables the servers need and nobody has set (or set to
//! the empty string, as `cp .env.example .env` leaves them), where each
//! value goes, the questions an answer that will not work where its
//! `${VAR}` sits raises, and the writes once every value is known.
//!
//! [`plan_onboard`] decides everything and writes nothing; a front-end asks
//! for the values the plan leaves open (and the [`FitQuestion`]s about
//! each answer), then [`apply_onboard`] saves them all at once, so a user
//! who gives up half-way leaves every file as it was.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::check::{self, CheckReport, EnvSources, State, Variable};
use crate::config::claude_settings::{self, SettingsError};
use crate::config::scope::Scope;
use crate::config::store::Progress;
use crate::envfiles::dotenv;
use crate::envfiles::{self, EnvFiles};
use crate::mechanics::display::{escape, quoted_names};
use crate::ops::extraction_inputs::env_error;
use crate::ops::secret_stores::{Accounts, check_keychain, keep_in_keychain};
use crate::ops::write_steps::settings_ignored;
use crate::ops::{Context, Error, Kind};
use crate::secrets::value_fit::{self, Misfit, UrlPart};
use crate::stores::keychain;
use crate::stores::references::{self, Resolver};

/// Where onboarding saves the values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SaveTo {
    /// The `.env` next to the `.mcp.json` whose servers need each value
    /// (a user server's in the user's store).
    Dotenv,
    /// The `env` map of `.claude/settings.local.json`, which Claude Code
    /// applies itself in interactive sessions.
    ClaudeSettings,
    /// The OS keychain, with the `.env` [`SaveTo::Dotenv`] would write
    /// holding each entry's name (`keychain:…`).
    Keychain,
}

impl SaveTo {
    /// Whether the values' names go into dotenv files.
    fn dotenv_files(self) -> bool {
        matches!(self, Self::Dotenv | Self::Keychain)
    }
}

/// What to onboard.
#[derive(Debug, Clone)]
pub struct OnboardRequest {
    /// Where the values go.
    pub to: SaveTo,
    /// Only these variables (asked even when they have a value).
    pub only: Vec<String>,
    /// These variables are asked again even when they have a value.
    pub reset: Vec<String>,
    /// Copy values from the process environment instead of asking.
    pub from_env: bool,
    /// Save into a `.env` others can read all the same.
    pub force: bool,
    /// The variables whose reference in the repository's `.env.example`
    /// the person accepts without being asked.
    pub accept_references: Vec<String>,
}

/// Where a step's value comes from.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum StepValue {
    /// The front-end asks the user for it.
    Ask,
    /// Copied, without asking, from where it is already set.
    Copy {
        /// The value (never serialised).
        #[serde(skip)]
        value: String,
        /// Where it was found.
        from: CopiedFrom,
    },
    /// A reference the repository's `.env.example` names, used only when
    /// the person confirms it (the front-end shows it and asks; without a
    /// terminal, only a variable named by `--accept-reference`): a
    /// repository may point a variable at any item the person's vault
    /// holds. Never read before that. A confirmed one is saved as it is
    /// (the answer is the reference itself); any other answer is a value.
    Confirm {
        /// The reference, as `.env.example` gives it.
        reference: String,
    },
    /// A reference that gives a value, saved as it is: the value stays
    /// where the reference says.
    Reference {
        /// The reference (`op://…`, `keychain:…`), never a secret.
        reference: String,
        /// Where it was found.
        from: ReferenceFrom,
    },
}

/// Why onboarding does not use a reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NotUsed {
    /// The team's reference in `.env.example` gave no value: the variable
    /// is asked for instead.
    TeamReferenceFailed,
    /// A value kept in the keychain or a vault is not copied into Claude
    /// Code's settings in plaintext.
    NotCopied,
}

/// Where a reference saved without asking was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReferenceFrom {
    /// The team's `.env.example`, which names where the team keeps it.
    Example,
    /// An entry of this project already in the keychain (saved from
    /// another clone of the repository).
    Keychain,
}

/// A reference onboarding does not use, and why.
#[derive(Debug, Clone, Serialize)]
pub struct UnresolvedReference {
    /// Why it is not used.
    pub why: NotUsed,
    /// The variable.
    pub name: String,
    /// The reference.
    pub reference: String,
    /// Why it gave nothing, and the next step.
    pub message: String,
    /// The next step.
    pub hint: String,
}

/// Where a copied value was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CopiedFrom {
    /// The process environment (`--from-env`).
    Environment,
    /// A `.env` file Claude Code started without `mcpenv run` does not see.
    DotEnv,
}

/// One variable to save, where its value comes from and the file it goes to.
#[derive(Debug, Clone, Serialize)]
pub struct OnboardStep {
    /// The variable, as `check` sees it.
    pub variable: Variable,
    /// Asked or copied.
    pub value: StepValue,
    /// The dotenv file (for [`SaveTo::Dotenv`]) or the settings file.
    pub file: PathBuf,
}

/// Everything onboarding will do, decided before anything is asked or
/// written.
#[derive(Debug, Clone, Serialize)]
pub struct OnboardPlan {
    /// Where the values go.
    pub to: SaveTo,
    /// Whether values are copied from the environment rather than asked.
    pub from_env: bool,
    /// Save into a `.env` others can read all the same.
    pub force: bool,
    /// One step per variable, in order of first use.
    pub steps: Vec<OnboardStep>,
    /// Variables that need a value but are set empty in the environment,
    /// which wins over every file: no file can give them one.
    pub shadowed: Vec<String>,
    /// References not used: team references of `.env.example` that gave
    /// no value, values kept elsewhere not copied into settings.
    pub unresolved: Vec<UnresolvedReference>,
}

impl OnboardPlan {
    /// The names of the variables the front-end asks for.
    pub fn asked(&self) -> Vec<&str> {
        self.steps
            .iter()
            .filter(|step| matches!(step.value, StepValue::Ask | StepValue::Confirm { .. }))
            .map(|step| step.variable.name.as_str())
            .collect()
    }

    /// The files values go to, each once, in order.
    fn files(&self) -> Vec<&Path> {
        let mut files: Vec<&Path> = self.steps.iter().map(|step| step.file.as_path()).collect();
        files.dedup();
        files
    }
}

/// Decides what onboarding does: which variables, where each value comes
/// from and goes to. Reads the configs and `.env` files; writes nothing.
pub fn plan_onboard(ctx: &Context, request: &OnboardRequest) -> Result<OnboardPlan, Error> {
    let inventory = ctx.inventory()?;
    let sources = ctx.env_sources()?;
    let found = check::check(&ctx.locations, &inventory, &sources, || {
        crate::templates::all(&ctx.template_dirs).0
    });
    check_names(&request.only, "--only", &found)?;
    check_names(&request.reset, "--reset", &found)?;
    check_names(&request.accept_references, "--accept-reference", &found)?;
    if request.to == SaveTo::ClaudeSettings
        && let Some(gate) = claude_settings::gate(&ctx.locations)
    {
        return Err(with_dotenv_hint(ctx, settings_ignored(ctx, gate)));
    }
    let saved_here = saved_values(ctx, request.to, &sources);
    let mut unresolved = Vec::new();
    let (steps, shadowed) = steps(ctx, request, &found, &sources, &saved_here, &mut unresolved);
    // Before anyone types a secret for it.
    if request.to == SaveTo::Keychain
        && steps
            .iter()
            .any(|step| !matches!(step.value, StepValue::Reference { .. }))
    {
        check_keychain(&ctx.edit)?;
    }
    Ok(OnboardPlan {
        to: request.to,
        from_env: request.from_env,
        force: request.force,
        steps,
        shadowed,
        unresolved,
    })
}

/// A `.env` made private before secrets were typed for it.
#[derive(Debug, Clone, Serialize)]
pub struct MadePrivate {
    /// The file.
    pub file: PathBuf,
    /// Its mode before.
    pub mode: u32,
}

/// Refuses, before anything is asked, a dotenv file of `plan` that cannot
/// hold secrets where it really is (a link out of the repository, or to a
/// file git would commit): the person types nothing in vain.
pub fn check_destinations(plan: &OnboardPlan) -> Result<(), Error> {
    if plan.to.dotenv_files() {
        for file in plan.files() {
            envfiles::check_secret_file(file).map_err(env_error)?;
        }
    }
    Ok(())
}

/// Makes each dotenv file that gets a value private (mode 600) after the
/// last answer and before the first write (a `.env` copied from
/// `.env.example` is as readable as the umask made it); nothing is changed
/// when Ctrl-C ends the questions, or when every answer was skipped.
/// Refuses one others can still read, unless forced.
pub fn secure_destinations(
    ctx: &Context,
    plan: &OnboardPlan,
    answers: &BTreeMap<String, String>,
) -> Result<Vec<MadePrivate>, Error> {
    let mut made = Vec::new();
    if !plan.to.dotenv_files() {
        return Ok(made);
    }
    let mut receiving: Vec<&Path> = plan
        .steps
        .iter()
        .filter(|step| match step.value {
            StepValue::Copy { .. } | StepValue::Reference { .. } => true,
            StepValue::Ask | StepValue::Confirm { .. } => answers.contains_key(&step.variable.name),
        })
        .map(|step| step.file.as_path())
        .collect();
    receiving.dedup();
    for file in receiving {
        if let Some(mode) =
            envfiles::make_private(&ctx.edit, file, plan.force).map_err(env_error)?
        {
            made.push(MadePrivate {
                file: file.to_path_buf(),
                mode,
            });
        }
        envfiles::check_private(file, plan.force).map_err(env_error)?;
    }
    Ok(made)
}

/// Whether `value` can be saved where `to` keeps values: refused at the
/// prompt, not after the last answer.
pub fn storable(to: SaveTo, value: &str) -> Result<(), String> {
    match to {
        SaveTo::Dotenv => dotenv::quote(value)
            .map(|_| ())
            .map_err(|error| format!("this value cannot be saved in `.env`: {error}")),
        SaveTo::ClaudeSettings | SaveTo::Keychain => Ok(()),
    }
}

/// The kinds of question an answer can raise, in the order they are asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FitKind {
    /// The value repeats a prefix (`Bearer `) its field writes already.
    RepeatsPrefix,
    /// The value holds characters that break the URL it is put into.
    BreaksUrl,
    /// The value does not match the format its template expects.
    UnexpectedFormat,
}

/// A yes/no question about an answer that will not work where its
/// placeholders sit. The value itself is never in it.
#[derive(Debug, Clone, Serialize)]
pub struct FitQuestion {
    /// What is wrong.
    pub kind: FitKind,
    /// The question, for a person.
    pub question: String,
    /// The answer an empty reply means.
    pub default: bool,
    #[serde(skip)]
    fix: Fix,
}

/// What a yes does to the answer.
#[derive(Debug, Clone)]
enum Fix {
    DropPrefix(String),
    Encode(UrlPart),
    Keep,
}

impl FitQuestion {
    /// The answer after the reply `yes`: `Some` with the value to go on
    /// with (fixed as agreed), `None` to ask for the value again.
    pub fn resolve(&self, answer: String, yes: bool) -> Option<String> {
        match (&self.fix, yes) {
            (Fix::DropPrefix(prefix), true) => Some(value_fit::without_prefix(&answer, prefix)),
            (Fix::Encode(part), true) => Some(value_fit::encoded(&answer, *part)),
            (Fix::Keep, false) => None,
            (_, _) => Some(answer),
        }
    }
}

/// The next question about `answer` for `variable`, of a kind after
/// `asked` (the kind of the question answered last): one question per
/// kind, each about the answer as it is by then, since dropping a repeated
/// `Bearer ` changes what a URL would get. `None` once the answer is kept.
pub fn next_fit_question(
    variable: &Variable,
    answer: &str,
    asked: Option<FitKind>,
) -> Option<FitQuestion> {
    let after = |kind: FitKind| asked.is_none_or(|asked| kind > asked);
    if after(FitKind::RepeatsPrefix)
        && let Some((field, prefix)) = value_fit::misfits(answer, &variable.placements)
            .into_iter()
            .find_map(|misfit| match misfit {
                Misfit::RepeatsPrefix { field, prefix } => Some((field, prefix)),
                Misfit::BreaksUrl { .. } => None,
            })
    {
        return Some(FitQuestion {
            kind: FitKind::RepeatsPrefix,
            question: format!(
                "The value starts with `{}`, which `{}` already writes before it. Drop it from the value?",
                prefix.trim_end(),
                escape(&field)
            ),
            default: true,
            fix: Fix::DropPrefix(prefix),
        });
    }
    if after(FitKind::BreaksUrl)
        && let Some((field, part, characters)) = value_fit::misfits(answer, &variable.placements)
            .into_iter()
            .find_map(|misfit| match misfit {
                Misfit::BreaksUrl {
                    field,
                    part,
                    characters,
                } => Some((field, part, characters)),
                Misfit::RepeatsPrefix { .. } => None,
            })
    {
        let listed: Vec<String> = characters.iter().map(|c| format!("`{c}`")).collect();
        return Some(FitQuestion {
            kind: FitKind::BreaksUrl,
            question: format!(
                "The value holds {}, which break{} {} in `{}`. Percent-encode it?",
                listed.join(", "),
                if characters.len() == 1 { "s" } else { "" },
                part.describe(),
                escape(&field)
            ),
            default: true,
            fix: Fix::Encode(part),
        });
    }
    if after(FitKind::UnexpectedFormat)
        && let Some(expected) = &variable.expected
        && !expected.accepts(answer)
    {
        let mut question = format!(
            "It does not look like a {} value (expected `{}`). Keep it anyway?",
            escape(&expected.what),
            escape(&expected.pattern)
        );
        if let Some(how) = &expected.how_to_get {
            question.push_str(&format!(" (get one at {})", escape(how)));
        }
        return Some(FitQuestion {
            kind: FitKind::UnexpectedFormat,
            question,
            default: false,
            fix: Fix::Keep,
        });
    }
    None
}

/// The values saved in one file.
#[derive(Debug, Clone, Serialize)]
pub struct SavedFile {
    /// The file.
    pub file: PathBuf,
    /// The variables saved in it, in order.
    pub names: Vec<String>,
    /// Those among them saved as a reference found already (the team's,
    /// or another clone's keychain entry), not as a value given now.
    pub references: Vec<String>,
}

/// What onboarding saved.
#[derive(Debug, Clone, Serialize)]
pub struct OnboardReport {
    /// Where the values went.
    pub to: SaveTo,
    /// Each file's saved variables, in the order written.
    pub saved: Vec<SavedFile>,
    /// Variables asked for and left without an answer.
    pub skipped: Vec<String>,
    /// Files written, in order.
    pub written: Vec<PathBuf>,
    /// No git directory was found to keep `.claude/settings.local.json`
    /// out of git.
    pub not_excluded: bool,
}

/// Saves every value of `plan`: each copied value, and each answer in
/// `answers` (by variable name; an asked variable without one is
/// skipped). Writes nothing when there is nothing to save.
pub fn apply_onboard(
    ctx: &Context,
    plan: &OnboardPlan,
    answers: &BTreeMap<String, String>,
) -> Result<OnboardReport, Error> {
    let mut by_file: Vec<(&Path, Vec<Saving>)> = Vec::new();
    let mut skipped = Vec::new();
    for step in &plan.steps {
        let name = &step.variable.name;
        let saving = match &step.value {
            StepValue::Copy { value, .. } => Saving::Value(name.clone(), value.clone()),
            StepValue::Reference { reference, .. } => {
                Saving::Reference(name.clone(), reference.clone())
            }
            StepValue::Confirm { reference } if answers.get(name) == Some(reference) => {
                Saving::Reference(name.clone(), reference.clone())
            }
            StepValue::Ask | StepValue::Confirm { .. } => match answers.get(name) {
                Some(value) => Saving::Value(name.clone(), value.clone()),
                None => {
                    skipped.push(name.clone());
                    continue;
                }
            },
        };
        match by_file.iter_mut().find(|(known, _)| *known == step.file) {
            Some((_, list)) => list.push(saving),
            None => by_file.push((&step.file, vec![saving])),
        }
    }
    let mut progress = Progress::default();
    for (file, _) in &by_file {
        progress.plan(*file);
    }
    crate::ops::write_steps::check_confined(progress.left())?;
    // Kept in the keychain first, so no file names an entry not made.
    let mut accounts = Accounts::default();
    let mut to_write = Vec::new();
    for (file, savings) in &by_file {
        let mut values = Vec::new();
        let mut kept = Vec::new();
        for saving in savings {
            match saving {
                Saving::Value(name, value) if plan.to == SaveTo::Keychain => {
                    kept.push((name.clone(), value.clone()));
                }
                Saving::Value(name, value) | Saving::Reference(name, value) => {
                    values.push((name.clone(), value.clone()));
                }
            }
        }
        values.extend(keep_in_keychain(ctx, &mut accounts, file, &kept)?);
        // In the plan's order.
        values.sort_by_key(|(name, _)| {
            savings
                .iter()
                .position(|saving| saving.name() == name)
                .unwrap_or(usize::MAX)
        });
        to_write.push((*file, values));
    }
    let mut saved = Vec::new();
    let mut not_excluded = false;
    for (file, values) in &to_write {
        not_excluded |= save(ctx, plan, file, values, &mut progress)?;
        let references = by_file
            .iter()
            .filter(|(known, _)| known == file)
            .flat_map(|(_, savings)| savings)
            .filter(|saving| matches!(saving, Saving::Reference(..)))
            .map(|saving| saving.name().to_string())
            .collect();
        saved.push(SavedFile {
            file: file.to_path_buf(),
            names: values.iter().map(|(name, _)| name.clone()).collect(),
            references,
        });
    }
    Ok(OnboardReport {
        to: plan.to,
        saved,
        skipped,
        written: progress.into_written(),
        not_excluded,
    })
}

/// One variable to save: a value, or a reference saved as it is.
enum Saving {
    Value(String, String),
    Reference(String, String),
}

impl Saving {
    fn name(&self) -> &str {
        match self {
            Self::Value(name, _) | Self::Reference(name, _) => name,
        }
    }
}

/// Saves `values` into `file`: a project `.env` with its `.gitignore`
/// rule first, any other dotenv file (the user's store, `.env.local`) as
/// it is, or Claude Code's local settings. Whether no git directory keeps
/// the settings file out of git.
fn save(
    ctx: &Context,
    plan: &OnboardPlan,
    file: &Path,
    values: &[(String, String)],
    progress: &mut Progress,
) -> Result<bool, Error> {
    let state_dir = &ctx.locations.state_dir;
    let result = match plan.to {
        SaveTo::ClaudeSettings => {
            let saved = claude_settings::save_env(&ctx.locations, &ctx.edit, values)
                .map_err(|error| settings_error(ctx, error))?;
            for written in &saved.written {
                progress.record(written, true);
            }
            progress.record(file, false);
            return Ok(saved.not_excluded);
        }
        SaveTo::Dotenv | SaveTo::Keychain if file == ctx.user_env_file() => {
            envfiles::save_user_with(&ctx.edit, file, state_dir, values, plan.force, progress)
        }
        SaveTo::Dotenv | SaveTo::Keychain
            if file.file_name().is_some_and(|name| name == ".env") =>
        {
            let dir = file.parent().unwrap_or(Path::new("."));
            envfiles::save_with(
                &ctx.edit,
                &EnvFiles::at(dir),
                state_dir,
                values,
                &[],
                plan.force,
                progress,
            )
        }
        SaveTo::Dotenv | SaveTo::Keychain => {
            envfiles::save_values_with(&ctx.edit, file, state_dir, values, plan.force, progress)
        }
    };
    result
        .map(|()| false)
        .map_err(|error| env_error(error).interrupted(progress))
}

/// `--only` and `--reset` names must be variables the servers use: a typo
/// would otherwise pass silently.
fn check_names(asked: &[String], flag: &str, found: &CheckReport) -> Result<(), Error> {
    let unknown: Vec<&String> = asked
        .iter()
        .filter(|name| {
            !found
                .variables
                .iter()
                .any(|variable| &variable.name == *name)
        })
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    let known: Vec<&str> = found
        .variables
        .iter()
        .map(|variable| variable.name.as_str())
        .collect();
    let mut error = Error::usage(format!(
        "`{flag}`: no MCP server in effect here uses {}",
        quoted_names(&unknown)
    ));
    if let Some(close) = unknown
        .iter()
        .find_map(|name| crate::ops::names::closest(&known, name))
    {
        error = error.with_hint(format!("did you mean `{close}`?"));
    }
    Err(error.with_hint(if known.is_empty() {
        "no MCP server in effect here uses a `${VAR}` placeholder".to_string()
    } else {
        format!("the servers here use: {}", quoted_names(&known))
    }))
}

/// The values the target already holds, so `--from-env` copies only what
/// would change.
fn saved_values(ctx: &Context, to: SaveTo, sources: &EnvSources) -> BTreeMap<String, String> {
    match to {
        SaveTo::Dotenv | SaveTo::Keychain => sources.file_values(),
        SaveTo::ClaudeSettings => claude_settings::read_env(&ctx.locations.local_settings())
            .into_iter()
            .collect(),
    }
}

/// What to do for each variable, in order of first use, and the variables
/// that need a value but are set empty in the environment, which no file
/// can override.
fn steps(
    ctx: &Context,
    request: &OnboardRequest,
    found: &CheckReport,
    sources: &EnvSources,
    saved_here: &BTreeMap<String, String>,
    unresolved: &mut Vec<UnresolvedReference>,
) -> (Vec<OnboardStep>, Vec<String>) {
    let mut resolver = Resolver::new(ctx.shield.clone());
    let mut accounts = Accounts::default();
    let in_files = sources.file_values();
    let mut shadowed = Vec::new();
    let mut steps = Vec::new();
    let mut step = |variable: &Variable, value: StepValue, file: PathBuf| {
        steps.push(OnboardStep {
            variable: variable.clone(),
            value,
            file,
        });
    };
    for variable in &found.variables {
        let name = &variable.name;
        if !request.only.is_empty() && !request.only.contains(name) {
            continue;
        }
        let file = destination(ctx, request.to, found, sources, variable);
        if request.from_env
            && let Some(value) = sources.process.get(name)
        {
            if saved_here.get(name) != Some(value) && !value.is_empty() {
                let value = StepValue::Copy {
                    value: value.clone(),
                    from: CopiedFrom::Environment,
                };
                step(variable, value, file);
            }
            continue;
        }
        // Set in `.env` only: Claude Code started without `mcpenv run`
        // does not see it, so its settings need the value too.
        if request.to == SaveTo::ClaudeSettings
            && !variable.seen_by_claude
            && let Some(value) = in_files.get(name).filter(|value| !value.is_empty())
        {
            // Kept in a keychain or a vault: copying it into a settings
            // file would undo that.
            if let Some(manager) = references::manager_of(value) {
                unresolved.push(UnresolvedReference {
                    why: NotUsed::NotCopied,
                    name: name.clone(),
                    reference: value.clone(),
                    message: format!(
                        "is {}; it is not copied into Claude Code's settings in plaintext",
                        manager.source()
                    ),
                    hint: "start Claude Code with `mcpenv run -- claude`, which hands the value on"
                        .to_string(),
                });
                continue;
            }
            let value = StepValue::Copy {
                value: value.clone(),
                from: CopiedFrom::DotEnv,
            };
            step(variable, value, file);
            continue;
        }
        // Named on the command line: asked even when it has a value.
        let named = request.only.contains(name) || request.reset.contains(name);
        let wanted = named || variable.needs_value();
        if !wanted || request.from_env {
            continue;
        }
        if variable.state == State::Empty && variable.source.as_deref() == Some("environment") {
            shadowed.push(name.clone());
            continue;
        }
        // What the team or another clone already keeps, unless the
        // person asked to type it again.
        if !named && request.to.dotenv_files() {
            if let Some(reference) = team_reference(sources, &file, name) {
                // The repository chose it: shown and confirmed before it
                // is read or copied.
                if !request.accept_references.contains(name) {
                    step(variable, StepValue::Confirm { reference }, file);
                    continue;
                }
                match resolver.resolve(&reference) {
                    Some(Ok(_)) => {
                        let value = StepValue::Reference {
                            reference,
                            from: ReferenceFrom::Example,
                        };
                        step(variable, value, file);
                        continue;
                    }
                    Some(Err(error)) => unresolved.push(UnresolvedReference {
                        why: NotUsed::TeamReferenceFailed,
                        name: name.clone(),
                        reference,
                        message: error.message,
                        hint: error.hint,
                    }),
                    None => {}
                }
            }
            if request.to == SaveTo::Keychain {
                let account = accounts.account(ctx, &file, name);
                if keychain::get(&account).is_ok() {
                    let value = StepValue::Reference {
                        reference: keychain::reference(&account),
                        from: ReferenceFrom::Keychain,
                    };
                    step(variable, value, file);
                    continue;
                }
            }
        }
        step(variable, StepValue::Ask, file);
    }
    (steps, shadowed)
}

/// Reads a reference from the repository's `.env.example` that the person
/// just agreed to use, to tell whether it gives a value (teaching the
/// shield the value).
pub fn resolve_accepted(ctx: &Context, reference: &str) -> Result<(), references::ResolveError> {
    match Resolver::new(ctx.shield.clone()).resolve(reference) {
        Some(Err(error)) => Err(error),
        Some(Ok(_)) | None => Ok(()),
    }
}

/// The reference the team's `.env.example` next to `file` gives `name`,
/// when it gives one a team can share (`op://…`).
fn team_reference(sources: &EnvSources, file: &Path, name: &str) -> Option<String> {
    let dir = file.parent()?;
    let project = sources
        .projects
        .iter()
        .find(|project| project.dir == dir)
        .unwrap_or(sources.project());
    let value = project.example.get(name)?;
    references::manager_of(value)
        .filter(|manager| manager.shared())
        .map(|_| value.to_string())
}

/// The file a value for `variable` goes to. A dotenv file that holds the
/// name already (empty, or a value being re-entered) gets it, since it
/// would still win; otherwise the `.env` next to the outermost `.mcp.json`
/// whose servers need it (seen from every package below), the project's
/// `.env` for a local server, and the user's store for a variable only
/// user servers use.
fn destination(
    ctx: &Context,
    to: SaveTo,
    found: &CheckReport,
    sources: &EnvSources,
    variable: &Variable,
) -> PathBuf {
    if to == SaveTo::ClaudeSettings {
        return ctx.locations.local_settings();
    }
    if let Some(source) = variable.source.as_deref().map(Path::new)
        && sources
            .dotenv_files()
            .iter()
            .any(|file| file.path == source)
    {
        return source.to_path_buf();
    }
    let needing: Vec<&check::ServerCheck> = found
        .servers
        .iter()
        .filter(|server| variable.servers.contains(&server.name))
        .collect();
    let project_dir = needing
        .iter()
        .filter(|server| server.scope == Scope::Project)
        .filter_map(|server| server.file.parent())
        .filter(|dir| sources.projects.iter().any(|project| project.dir == *dir))
        .min_by_key(|dir| dir.components().count());
    if let Some(dir) = project_dir {
        return dir.join(".env");
    }
    if !needing.is_empty() && needing.iter().all(|server| server.scope == Scope::User) {
        return ctx.user_env_file();
    }
    sources.project().dir.join(".env")
}

/// `error` with the other way to get the values to Claude Code: `.env`
/// and `mcpenv run`.
fn with_dotenv_hint(ctx: &Context, error: Error) -> Error {
    error.with_hint(format!(
        "or save the values to `.env` with `{}`, then start Claude Code with `{}`",
        ctx.command(&["onboard", "--to", "dotenv"]),
        ctx.command(&["run", "--", "claude"])
    ))
}

/// The error for a settings problem.
fn settings_error(ctx: &Context, error: SettingsError) -> Error {
    match error {
        SettingsError::Config(error) => error.into(),
        ignored @ SettingsError::Ignored { .. } => {
            with_dotenv_hint(ctx, Error::new(Kind::Failure, Box::new(ignored)))
        }
    }
}
