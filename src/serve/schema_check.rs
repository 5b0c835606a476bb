//! A tool call's arguments checked against the tool's input schema, as the
//! client's JSON Schema validator would check them.
//!
//! Written here rather than taken from a validator crate: the schemas are
//! mcpenv's own (`tools::all`) and use ten keywords, while a general
//! validator (jsonschema, with its own regex engine, big numbers and
//! reference resolution) was 2 MB of the binary. The unit tests fail when
//! a schema uses a keyword not checked here, and check this against
//! jsonschema itself on generated arguments.

use serde_json::Value;

/// One way the arguments break the schema.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    /// Where, from the arguments' root (`["servers", "0"]`).
    pub path: Vec<String>,
    pub kind: ViolationKind,
}

/// What rule was broken.
#[derive(Debug, Clone, PartialEq)]
pub enum ViolationKind {
    /// Members the schema does not allow, in the order sent.
    Unexpected(Vec<String>),
    /// A required member left out.
    Missing(String),
    /// A value of another JSON type than `wanted` (`"string"`).
    Type { wanted: String, got: &'static str },
    /// A value outside an `enum`; its options.
    NotOneOf(Value),
    /// `minLength`, `minimum` or `pattern`.
    Keyword(&'static str),
}

/// Every violation of `schema` by `instance`, in the schema's keyword order
/// (as jsonschema reports them).
pub fn violations(schema: &Value, instance: &Value) -> Vec<Violation> {
    let mut found = Vec::new();
    check(schema, instance, &mut Vec::new(), &mut found);
    found
}

fn check(schema: &Value, instance: &Value, path: &mut Vec<String>, found: &mut Vec<Violation>) {
    let Some(rules) = schema.as_object() else {
        return;
    };
    let at = |found: &mut Vec<Violation>, path: &[String], kind| {
        found.push(Violation {
            path: path.to_vec(),
            kind,
        });
    };
    for (keyword, rule) in rules {
        match keyword.as_str() {
            "type" => {
                if let Some(wanted) = rule.as_str()
                    && !has_type(instance, wanted)
                {
                    at(
                        found,
                        path,
                        ViolationKind::Type {
                            wanted: wanted.to_string(),
                            got: crate::config::model::json_kind(instance),
                        },
                    );
                }
            }
            "enum" => {
                if let Some(options) = rule.as_array()
                    && !options.contains(instance)
                {
                    at(found, path, ViolationKind::NotOneOf(rule.clone()));
                }
            }
            "minLength" => {
                if let (Some(text), Some(least)) = (instance.as_str(), rule.as_u64())
                    && (text.chars().count() as u64) < least
                {
                    at(found, path, ViolationKind::Keyword("minLength"));
                }
            }
            "minimum" => {
                if let (Some(number), Some(least)) = (instance.as_f64(), rule.as_f64())
                    && instance.is_number()
                    && number < least
                {
                    at(found, path, ViolationKind::Keyword("minimum"));
                }
            }
            "pattern" => {
                // The patterns are mcpenv's constants; one that did not
                // compile would be caught by the unit test below.
                if let (Some(text), Some(pattern)) = (instance.as_str(), rule.as_str())
                    && regex::Regex::new(pattern).is_ok_and(|pattern| !pattern.is_match(text))
                {
                    at(found, path, ViolationKind::Keyword("pattern"));
                }
            }
            "required" => {
                if let (Some(members), Some(names)) = (instance.as_object(), rule.as_array()) {
                    for name in names.iter().filter_map(Value::as_str) {
                        if !members.contains_key(name) {
                            at(found, path, ViolationKind::Missing(name.to_string()));
                        }
                    }
                }
            }
            "additionalProperties" => {
                let Some(members) = instance.as_object() else {
                    continue;
                };
                let known = rules.get("properties").and_then(Value::as_object);
                let extra = members
                    .iter()
                    .filter(|(name, _)| !known.is_some_and(|known| known.contains_key(*name)));
                if rule == &Value::Bool(false) {
                    let unexpected: Vec<String> = extra.map(|(name, _)| name.clone()).collect();
                    if !unexpected.is_empty() {
                        at(found, path, ViolationKind::Unexpected(unexpected));
                    }
                } else {
                    for (name, value) in extra {
                        path.push(name.clone());
                        check(rule, value, path, found);
                        path.pop();
                    }
                }
            }
            "properties" => {
                if let (Some(members), Some(properties)) = (instance.as_object(), rule.as_object())
                {
                    for (name, property) in properties {
                        if let Some(value) = members.get(name) {
                            path.push(name.clone());
                            check(property, value, path, found);
                            path.pop();
                        }
                    }
                }
            }
            "items" => {
                if let Some(items) = instance.as_array() {
                    for (index, item) in items.iter().enumerate() {
                        path.push(index.to_string());
                        check(rule, item, path, found);
                        path.pop();
                    }
                }
            }
            _ => {}
        }
    }
}

/// Whether `value` is of JSON Schema type `wanted`: an integer is any
/// number without a fraction (`1.0` too), as the specification says.
fn has_type(value: &Value, wanted: &str) -> bool {
    match wanted {
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "null" => value.is_null(),
        "number" => value.is_number(),
        "integer" => {
            value.is_i64()
                || value.is_u64()
                || value.as_f64().is_some_and(|number| number.fract() == 0.0)
        }
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The keywords checked; `description` is read by people only.
    const KEYWORDS: &[&str] = &[
        "type",
        "properties",
        "required",
        "additionalProperties",
        "enum",
        "minLength",
        "minimum",
        "pattern",
        "items",
        "description",
    ];

    /// Every keyword of every schema in `value` (nested schemas included).
    fn keywords_in(schema: &Value, keywords: &mut Vec<String>) {
        let Some(rules) = schema.as_object() else {
            return;
        };
        for (keyword, rule) in rules {
            keywords.push(keyword.clone());
            match keyword.as_str() {
                "properties" => {
                    for property in rule.as_object().into_iter().flat_map(|map| map.values()) {
                        keywords_in(property, keywords);
                    }
                }
                "items" | "additionalProperties" => keywords_in(rule, keywords),
                "pattern" => {
                    let pattern = rule.as_str().expect("a pattern is a string");
                    regex::Regex::new(pattern).expect("the pattern compiles");
                }
                _ => {}
            }
        }
    }

    #[test]
    fn the_tools_schemas_use_only_the_checked_keywords() {
        for tool in crate::serve::tools::all() {
            let mut keywords = Vec::new();
            keywords_in(&Value::Object((*tool.input_schema).clone()), &mut keywords);
            for keyword in keywords {
                assert!(
                    KEYWORDS.contains(&keyword.as_str()),
                    "`{}` uses `{keyword}`, which schema_check does not check",
                    tool.name
                );
            }
        }
    }

    #[test]
    fn reports_each_rule() {
        let schema = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 1, "pattern": "^[a-z]+$"},
                "scope": {"enum": ["project", "user"]},
                "package": {"type": "integer", "minimum": 1},
                "servers": {"type": "array", "items": {"type": "string"}},
                "vars": {"type": "object", "additionalProperties": {"type": "string"}}
            },
            "required": ["name"],
            "additionalProperties": false
        });
        let kinds = |instance: Value| -> Vec<(Vec<String>, ViolationKind)> {
            violations(&schema, &instance)
                .into_iter()
                .map(|violation| (violation.path, violation.kind))
                .collect()
        };
        assert_eq!(kinds(json!({"name": "ok"})), vec![]);
        assert_eq!(
            kinds(json!({})),
            vec![(vec![], ViolationKind::Missing("name".into()))]
        );
        assert_eq!(
            kinds(json!({"name": "ok", "b": 1, "a": 2})),
            vec![(
                vec![],
                ViolationKind::Unexpected(vec!["b".into(), "a".into()])
            )]
        );
        assert_eq!(
            kinds(json!({"name": ""})),
            vec![
                (vec!["name".into()], ViolationKind::Keyword("minLength")),
                (vec!["name".into()], ViolationKind::Keyword("pattern")),
            ]
        );
        assert_eq!(
            kinds(json!({"name": "ok", "scope": "local", "package": 0})),
            vec![
                (
                    vec!["scope".into()],
                    ViolationKind::NotOneOf(json!(["project", "user"]))
                ),
                (vec!["package".into()], ViolationKind::Keyword("minimum")),
            ]
        );
        assert_eq!(kinds(json!({"name": "ok", "package": 2.0})), vec![]);
        assert_eq!(
            kinds(json!({"name": "ok", "servers": ["a", 3], "vars": {"x": true}})),
            vec![
                (
                    vec!["servers".into(), "1".into()],
                    ViolationKind::Type {
                        wanted: "string".into(),
                        got: "a number"
                    }
                ),
                (
                    vec!["vars".into(), "x".into()],
                    ViolationKind::Type {
                        wanted: "string".into(),
                        got: "a boolean"
                    }
                ),
            ]
        );
        assert_eq!(
            kinds(json!(3)),
            vec![(
                vec![],
                ViolationKind::Type {
                    wanted: "object".into(),
                    got: "a number"
                }
            )]
        );
    }

    /// A value for a member of a tool's arguments: each JSON type, and
    /// strings and numbers near the schemas' bounds.
    fn member_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-2i64..4).prop_map(|number| json!(number)),
            Just(json!(1.5)),
            Just(json!(2.0)),
            prop::sample::select(vec![
                "",
                "a",
                "project",
                "local",
                "user",
                "sse",
                "http",
                "dotenv",
                "keychain",
                "https://x.example",
                "ftp://x",
                "A_1",
                "1A",
                "bad name",
                "ok-name_2",
            ])
            .prop_map(|text| json!(text)),
        ];
        leaf.prop_recursive(2, 8, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                prop::collection::vec(("[a-c]", inner), 0..3)
                    .prop_map(|members| Value::Object(members.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        /// For every tool, arguments made of its members (and a stranger)
        /// are accepted by this check exactly when jsonschema accepts them.
        #[test]
        fn agrees_with_jsonschema(
            tool in 0usize..6,
            picks in proptest::collection::vec((0usize..16, member_value()), 0..5),
        ) {
            let tools = crate::serve::tools::all();
            let schema = Value::Object((*tools[tool % tools.len()].input_schema).clone());
            let mut names: Vec<String> = schema["properties"]
                .as_object()
                .map(|properties| properties.keys().cloned().collect())
                .unwrap_or_default();
            names.push("stranger".to_string());
            let instance = Value::Object(
                picks
                    .into_iter()
                    .map(|(pick, value)| (names[pick % names.len()].clone(), value))
                    .collect(),
            );
            let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
            proptest::prop_assert_eq!(
                violations(&schema, &instance).len(),
                validator.iter_errors(&instance).count(),
                "{}", instance
            );
        }
    }
}
