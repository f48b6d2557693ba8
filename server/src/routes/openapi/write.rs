//! Writes the constraints of `constraints.rs` into the served document.

use serde_json::{Value, json};

use super::{
    constraints::{bodies, cuid_path, derived, params},
    rules::{self, Rule, cuid},
};

/// Write [`bodies`] and the parameters' rules into the served document.
/// Returns the entries that name no schema field or parameter (a renamed
/// field): the test fails on any.
pub fn constraints(doc: &mut Value) -> Vec<String> {
    let mut missing = Vec::new();
    for (from, to, operations) in derived() {
        if !derive(doc, from, to, operations) {
            missing.push(format!("{to} (from {from})"));
        }
    }
    for (schema, field, rules) in bodies() {
        if !apply_field(doc, schema, field, &rules) {
            missing.push(format!("{schema}.{field}"));
        }
    }
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else {
        missing.push("paths".into());
        return missing;
    };
    for (path, item) in paths.iter_mut() {
        let Some(item) = item.as_object_mut() else {
            continue;
        };
        for (method, op) in item.iter_mut() {
            let Some(params) = op.get_mut("parameters").and_then(Value::as_array_mut) else {
                continue;
            };
            for param in params {
                let name = param["name"].as_str().unwrap_or_default().to_string();
                if param["in"] == "path" && cuid_path(path) {
                    apply_param(param, &cuid());
                }
                for rules in params_for(method, path, &name) {
                    apply_param(param, &rules);
                }
            }
        }
    }
    for (method, path, name, _) in params() {
        let found = doc["paths"][path][method]["parameters"]
            .as_array()
            .is_some_and(|ps| ps.iter().any(|p| p["name"] == name));
        if !found {
            missing.push(format!("{method} {path} {name}"));
        }
    }
    optional_bodies_are_omitted(doc);
    missing
}

fn params_for(method: &str, path: &str, name: &str) -> Vec<Vec<Rule>> {
    params()
        .into_iter()
        .filter(|(m, p, n, _)| *m == method && *p == path && *n == name)
        .map(|(_, _, _, rules)| rules)
        .collect()
}

fn apply_param(param: &mut Value, rules: &[Rule]) {
    if rules::apply(&mut param["schema"], rules) {
        param["required"] = Value::Bool(true);
    }
}

/// The object schema of `name` that declares `field` (itself, or an
/// `allOf` part).
fn declaring<'a>(doc: &'a mut Value, name: &str, field: &str) -> Option<&'a mut Value> {
    let schema = doc
        .get_mut("components")?
        .get_mut("schemas")?
        .get_mut(name)?;
    if schema["properties"].get(field).is_some() {
        return Some(schema);
    }
    schema
        .get_mut("allOf")?
        .as_array_mut()?
        .iter_mut()
        .find(|part| part["properties"].get(field).is_some())
}

fn apply_field(doc: &mut Value, schema: &str, field: &str, rules: &[Rule]) -> bool {
    if field.is_empty() {
        let Some(object) = doc
            .get_mut("components")
            .and_then(|c| c.get_mut("schemas"))
            .and_then(|s| s.get_mut(schema))
        else {
            return false;
        };
        rules::apply(object, rules);
        return true;
    }
    let (name, inner) = match (field.strip_suffix("[]"), field.strip_suffix("{}")) {
        (Some(name), _) => (name, Some("items")),
        (_, Some(name)) => (name, Some("additionalProperties")),
        _ => (field, None),
    };
    let Some(object) = declaring(doc, schema, name) else {
        return false;
    };
    let property = &mut object["properties"][name];
    let target = match inner {
        Some(key) => match property.get_mut(key) {
            Some(target) => target,
            None => return false,
        },
        None => property,
    };
    if rules::apply(target, rules) && inner.is_none() {
        let required = object
            .as_object_mut()
            .map(|o| o.entry("required").or_insert_with(|| Value::Array(vec![])));
        if let Some(Value::Array(list)) = required
            && !list.iter().any(|r| r == name)
        {
            list.push(Value::String(name.to_string()));
        }
    }
    true
}

/// A request body that may be left out is left out, never `null`: utoipa
/// writes `Option<T>` bodies as `oneOf [null, T]`.
fn optional_bodies_are_omitted(doc: &mut Value) {
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else {
        return;
    };
    for item in paths.values_mut().filter_map(Value::as_object_mut) {
        for op in item.values_mut() {
            let Some(body) = op.get_mut("requestBody") else {
                continue;
            };
            if body["required"] == Value::Bool(true) {
                continue;
            }
            if let Some(content) = body.get_mut("content").and_then(Value::as_object_mut) {
                for media in content.values_mut() {
                    rules::apply(&mut media["schema"], &[Rule::Required]);
                }
            }
        }
    }
}

fn derive(doc: &mut Value, from: &str, to: &str, operations: &[(&str, &str)]) -> bool {
    let Some(schema) = doc["components"]["schemas"].get(from).cloned() else {
        return false;
    };
    doc["components"]["schemas"][to] = schema;
    let target = json!({"$ref": format!("#/components/schemas/{to}")});
    operations.iter().all(|(method, path)| {
        match doc["paths"][*path][*method]
            .get_mut("requestBody")
            .and_then(|b| b.get_mut("content"))
            .and_then(|c| c.get_mut("application/json"))
        {
            Some(media) => {
                media["schema"] = target.clone();
                true
            }
            None => false,
        }
    })
}
