//! Undo member by member, for `~/.claude.json`: every project's local scope
//! and the user's live in that one file, and Claude Code rewrites it all
//! the time, so an edit's bytes are seldom still there whole. What the edit
//! changed is found by comparing the file before and after it, down to the
//! members that differ (the root's members, each project's, and their
//! members: each server entry, or any value that is no object, is one);
//! each of those is put back if it still holds what the edit wrote, and
//! every other member, changed by anybody since, is kept as it is now. A
//! member changed again since is a conflict: nothing is put back.

use std::ops::Range;

use serde_json::Value;

use crate::mechanics::document::JsonDocument;

/// Why the edit cannot be taken back member by member.
#[derive(Debug)]
pub enum Refusal {
    /// A member the edit changed holds neither what it wrote nor what it
    /// held before: it was changed again since.
    ChangedAgain(Vec<String>),
    /// One of the texts is not JSON the journal can follow.
    Unreadable,
}

/// One member the edit changed: its path of keys from the root, and what
/// it held before and after the edit (`None`: absent).
#[derive(Debug)]
struct Change {
    path: Vec<String>,
    before: Option<Value>,
    after: Option<Value>,
}

/// `current` with every member the edit from `before` to `after` changed
/// put back as it was in `before`; `Ok(None)` when `current` holds what
/// `before` did in each already.
pub fn take_back(before: &str, after: &str, current: &str) -> Result<Option<String>, Refusal> {
    let parse = |text: &str| JsonDocument::parse(text.to_string()).map_err(|_| Refusal::Unreadable);
    let (before, after) = (parse(before)?, parse(after)?);
    let mut document = parse(current)?;
    let mut changes = Vec::new();
    changed_members(
        (&before, root(&before)),
        (&after, root(&after)),
        &mut Vec::new(),
        &mut changes,
    );
    let mut put_back = false;
    let mut changed_again = Vec::new();
    for change in &changes {
        let (parent, key) = change.path.split_at(change.path.len() - 1);
        let parent: Vec<&str> = parent.iter().map(String::as_str).collect();
        let now = match document.object_at(&parent) {
            Ok(object) => object
                .and_then(|object| document.find_member(&object, &key[0]))
                .map(|member| document.value_at(&member.value_span)),
            // A value on the way is no object any more: changed since.
            Err(_) => {
                changed_again.push(shown_member(&change.path));
                continue;
            }
        };
        if now == change.before {
            continue;
        }
        if now != change.after {
            if taken_over(&before, change, &parent) {
                continue;
            }
            changed_again.push(shown_member(&change.path));
            continue;
        }
        let splice = match &change.before {
            Some(value) => Some(
                document
                    .plan_set(&parent, &key[0], value, &|_| serde_json::Map::new())
                    .map_err(|_| Refusal::Unreadable)?,
            ),
            None => document
                .plan_remove(&parent, &key[0])
                .map_err(|_| Refusal::Unreadable)?,
        };
        if let Some(splice) = splice {
            document = document.apply(&splice).map_err(|_| Refusal::Unreadable)?;
            put_back = true;
        }
    }
    if !changed_again.is_empty() {
        return Err(Refusal::ChangedAgain(changed_again));
    }
    if !put_back {
        return Ok(None);
    }
    document = drop_emptied(document, &before, &changes)?;
    Ok(Some(document.into_text()))
}

/// Whether a member the edit created changed since is left as it is now
/// rather than refused: one created with the object that holds it, as
/// Claude Code's defaults of a new project entry (`hasTrustDialogAccepted`),
/// which Claude Code has taken over since. Servers are never left.
fn taken_over(before: &JsonDocument, change: &Change, parent: &[&str]) -> bool {
    change.before.is_none()
        && !change.path.iter().any(|key| key == "mcpServers")
        && matches!(before.object_at(parent), Ok(None))
}

/// Removes the objects the edit created that hold nothing now that its
/// members are gone (the deepest first), as they were absent before.
fn drop_emptied(
    mut document: JsonDocument,
    before: &JsonDocument,
    changes: &[Change],
) -> Result<JsonDocument, Refusal> {
    let mut created: Vec<&[String]> = changes
        .iter()
        .filter(|change| change.before.is_none())
        .flat_map(|change| (1..change.path.len()).map(|depth| &change.path[..depth]))
        .filter(|path| {
            let keys: Vec<&str> = path.iter().map(String::as_str).collect();
            matches!(before.object_at(&keys), Ok(None))
        })
        .collect();
    created.sort_by_key(|path| std::cmp::Reverse(path.len()));
    created.dedup();
    for path in created {
        let keys: Vec<&str> = path.iter().map(String::as_str).collect();
        let empty = matches!(
            document.object_at(&keys),
            Ok(Some(object)) if document.members(&object).is_empty()
        );
        if !empty {
            continue;
        }
        let (parent, key) = keys.split_at(keys.len() - 1);
        if let Ok(Some(splice)) = document.plan_remove(parent, key[0]) {
            document = document.apply(&splice).map_err(|_| Refusal::Unreadable)?;
        }
    }
    Ok(document)
}

/// The root object's span; `None` for an empty document.
fn root(document: &JsonDocument) -> Option<Range<usize>> {
    document.object_at(&[]).ok().flatten()
}

/// Whether the value at `span` is an object (or absent, which is read as
/// an empty one, so a member created with its object is found).
fn object_or_absent(document: &JsonDocument, span: Option<&Range<usize>>) -> bool {
    span.is_none_or(|span| document.raw(span).starts_with('{'))
}

/// Whether the object at `path` is a container whose members are followed
/// one by one: the root's members (`mcpServers`), `projects`, each project
/// and its members. A server entry is one member: a server half taken
/// back would be no server.
fn container(path: &[String]) -> bool {
    path.len() < 2 || (path[0] == "projects" && path.len() < 4)
}

/// Collects into `changes` the members that differ between the values at
/// `before` and `after`, at `path`, following objects.
fn changed_members(
    before: (&JsonDocument, Option<Range<usize>>),
    after: (&JsonDocument, Option<Range<usize>>),
    path: &mut Vec<String>,
    changes: &mut Vec<Change>,
) {
    let ((old, old_span), (new, new_span)) = (before, after);
    match (&old_span, &new_span) {
        (None, None) => return,
        (Some(old_span), Some(new_span)) if old.raw(old_span) == new.raw(new_span) => return,
        _ => {}
    }
    let followed = path.is_empty()
        || (container(path)
            && object_or_absent(old, old_span.as_ref())
            && object_or_absent(new, new_span.as_ref()));
    if !followed {
        changes.push(Change {
            path: path.clone(),
            before: old_span.map(|span| old.value_at(&span)),
            after: new_span.map(|span| new.value_at(&span)),
        });
        return;
    }
    let keys_of = |document: &JsonDocument, span: &Option<Range<usize>>| -> Vec<String> {
        span.as_ref().map_or_else(Vec::new, |span| {
            document
                .members(span)
                .iter()
                .map(|member| document.key(member).into_owned())
                .collect()
        })
    };
    let mut keys = keys_of(old, &old_span);
    for key in keys_of(new, &new_span) {
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    let mut seen = std::collections::HashSet::new();
    for key in keys {
        if !seen.insert(key.clone()) {
            continue;
        }
        let member = |document: &JsonDocument, span: &Option<Range<usize>>| {
            span.as_ref()
                .and_then(|span| document.find_member(span, &key))
                .map(|member| member.value_span)
        };
        let (old_member, new_member) = (member(old, &old_span), member(new, &new_span));
        path.push(key.clone());
        changed_members((old, old_member), (new, new_member), path, changes);
        path.pop();
    }
}

/// A member's path as people read it: `mcpServers.github`,
/// `projects["/home/me/app"].mcpServers.db`.
pub fn shown_member(path: &[String]) -> String {
    let mut shown = String::new();
    for key in path {
        let bare = !key.is_empty()
            && key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if bare {
            if !shown.is_empty() {
                shown.push('.');
            }
            shown.push_str(key);
        } else {
            shown.push_str(&format!("[{}]", Value::String(key.clone())));
        }
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEFORE: &str = r#"{
  "numStartups": 1,
  "mcpServers": {
    "kept": { "command": "a" }
  },
  "projects": {
    "/a": { "allowedTools": [] }
  }
}"#;

    /// `BEFORE` after an edit that added `x` to `/a`'s local scope.
    fn edited() -> String {
        BEFORE.replace(
            r#""/a": { "allowedTools": [] }"#,
            r#""/a": { "allowedTools": [], "mcpServers": { "x": { "command": "node" } } }"#,
        )
    }

    #[test]
    fn only_the_members_the_edit_changed_are_put_back() {
        let after = edited();
        // Since: Claude Code counted a start, another project got a server.
        let current = after
            .replace(r#""numStartups": 1"#, r#""numStartups": 2"#)
            .replace(
                r#""/a": {"#,
                r#""/b": { "mcpServers": { "y": { "command": "b" } } },
    "/a": {"#,
            );
        let undone = take_back(BEFORE, &after, &current).unwrap().unwrap();
        let expected = BEFORE
            .replace(r#""numStartups": 1"#, r#""numStartups": 2"#)
            .replace(
                r#""/a": {"#,
                r#""/b": { "mcpServers": { "y": { "command": "b" } } },
    "/a": {"#,
            );
        assert_eq!(undone, expected);
    }

    #[test]
    fn a_member_changed_again_since_is_refused_by_name() {
        let after = edited();
        let current = after.replace(r#""node""#, r#""deno""#);
        match take_back(BEFORE, &after, &current) {
            Err(Refusal::ChangedAgain(members)) => {
                assert_eq!(members, [r#"projects["/a"].mcpServers.x"#]);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_default_of_a_new_project_entry_taken_over_since_stays() {
        let after =
            r#"{"projects": {"/a": {"trusted": false, "mcpServers": {"x": {"command": "n"}}}}}"#;
        let current =
            r#"{"projects": {"/a": {"trusted": true, "mcpServers": {"x": {"command": "n"}}}}}"#;
        let undone = take_back("", after, current).unwrap().unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&undone).unwrap(),
            serde_json::json!({"projects": {"/a": {"trusted": true}}})
        );
        // A server the edit created, changed since, is refused whole.
        let current = current.replace(r#"{"command": "n"}"#, r#"{"command": "n", "args": []}"#);
        assert!(matches!(
            take_back("", after, &current),
            Err(Refusal::ChangedAgain(_))
        ));
    }

    #[test]
    fn a_file_back_already_needs_nothing() {
        assert!(take_back(BEFORE, &edited(), BEFORE).unwrap().is_none());
    }

    #[test]
    fn objects_the_edit_created_go_when_emptied() {
        let after = r#"{"projects": {"/a": {"mcpServers": {"x": {"command": "n"}}}}}"#;
        let current =
            r#"{"numStartups": 3, "projects": {"/a": {"mcpServers": {"x": {"command": "n"}}}}}"#;
        let undone = take_back("", after, current).unwrap().unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&undone).unwrap(),
            serde_json::json!({"numStartups": 3})
        );
        // A member written there since keeps its object.
        let current =
            r#"{"projects": {"/a": {"lastCost": 1, "mcpServers": {"x": {"command": "n"}}}}}"#;
        let undone = take_back("", after, current).unwrap().unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&undone).unwrap(),
            serde_json::json!({"projects": {"/a": {"lastCost": 1}}})
        );
    }
}
