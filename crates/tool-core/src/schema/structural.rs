//! The structural validator: the JSON Schema keywords tool input schemas use, checked without
//! the `jsonschema` crate, with the same failures that crate reports for them. A schema with any
//! other keyword is refused when it is compiled.

use serde_json::Value;

use super::{Issue, Kind, Seg};

/// Keywords that only annotate: they never make an input invalid.
const ANNOTATIONS: &[&str] = &[
    "$schema",
    "$id",
    "$comment",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "format",
];

/// The type names of JSON Schema.
const TYPES: &[&str] = &[
    "null", "boolean", "object", "array", "number", "integer", "string",
];

/// Can the structural validator check every keyword of `schema`? `Err` names the first it
/// cannot, and where.
pub(super) fn supported(schema: &Value) -> Result<(), String> {
    supported_at(schema, "#")
}

fn supported_at(schema: &Value, at: &str) -> Result<(), String> {
    let Value::Object(o) = schema else {
        return match schema {
            Value::Bool(true) => Ok(()),
            _ => Err(format!(
                "{at}: a schema must be an object (or `true`); `false` and other values need tool-core's `jsonschema` feature"
            )),
        };
    };
    for (key, v) in o {
        let here = format!("{at}/{key}");
        match key.as_str() {
            k if ANNOTATIONS.contains(&k) => {}
            "type" => {
                let names: Vec<&Value> = match v {
                    Value::Array(a) if !a.is_empty() => a.iter().collect(),
                    single => vec![single],
                };
                for n in names {
                    if !n.as_str().is_some_and(|n| TYPES.contains(&n)) {
                        return Err(format!("{here}: {n} is not a JSON Schema type"));
                    }
                }
            }
            "properties" => {
                let props = v
                    .as_object()
                    .ok_or_else(|| format!("{here}: must be an object"))?;
                for (name, p) in props {
                    supported_at(p, &format!("{here}/{name}"))?;
                }
            }
            "required" => {
                if !v.as_array().is_some_and(|a| a.iter().all(Value::is_string)) {
                    return Err(format!("{here}: must be a list of strings"));
                }
            }
            "additionalProperties" => {
                if v != &Value::Bool(false) {
                    supported_at(v, &here)?;
                }
            }
            "items" => supported_at(v, &here)?,
            "enum" => {
                if !v.is_array() {
                    return Err(format!("{here}: must be a list"));
                }
            }
            "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => {
                if !v.is_number() {
                    return Err(format!("{here}: must be a number"));
                }
            }
            other => {
                return Err(format!(
                    "{here}: the keyword `{other}` needs tool-core's `jsonschema` feature"
                ));
            }
        }
    }
    Ok(())
}

/// What is wrong with `value` under `schema` (one [`supported`] accepted).
pub(super) fn issues(schema: &Value, value: &Value) -> Vec<Issue> {
    let mut out = Vec::new();
    check(schema, value, &mut Vec::new(), &mut out);
    out.extend(unsafe_integers(schema, value));
    out
}

fn issue(segments: &[Seg], kind: Kind, instance: &Value) -> Issue {
    Issue {
        segments: segments.to_vec(),
        kind,
        instance: instance.clone(),
    }
}

fn check(schema: &Value, value: &Value, at: &mut Vec<Seg>, out: &mut Vec<Issue>) {
    let Value::Object(s) = schema else {
        return;
    };
    if let Some(t) = s.get("type") {
        let ok = match t {
            Value::Array(names) => names.iter().any(|n| has_type(n, value)),
            name => has_type(name, value),
        };
        if !ok {
            out.push(issue(at, Kind::Type, value));
        }
    }
    if let Some(Value::Array(options)) = s.get("enum")
        && !options.iter().any(|o| same(o, value))
    {
        out.push(issue(at, Kind::Enum(Value::Array(options.clone())), value));
    }
    if let Some(n) = value.as_f64() {
        let bound = |key: &str| s.get(key).filter(|b| b.is_number());
        let f = |b: &Value| b.as_f64().unwrap_or(f64::NAN);
        if let Some(b) = bound("minimum")
            && n < f(b)
        {
            out.push(issue(at, Kind::Minimum(b.clone()), value));
        }
        if let Some(b) = bound("maximum")
            && n > f(b)
        {
            out.push(issue(at, Kind::Maximum(b.clone()), value));
        }
        if let Some(b) = bound("exclusiveMinimum")
            && n <= f(b)
        {
            out.push(issue(at, Kind::ExclusiveMinimum(b.clone()), value));
        }
        if let Some(b) = bound("exclusiveMaximum")
            && n >= f(b)
        {
            out.push(issue(at, Kind::ExclusiveMaximum(b.clone()), value));
        }
    }
    if let Value::Object(obj) = value {
        let props = s.get("properties").and_then(Value::as_object);
        if let Some(Value::Array(required)) = s.get("required") {
            for name in required.iter().filter_map(Value::as_str) {
                if !obj.contains_key(name) {
                    out.push(issue(at, Kind::Required(name.to_owned()), value));
                }
            }
        }
        if let Some(props) = props {
            for (name, p) in props {
                if let Some(v) = obj.get(name) {
                    at.push(Seg::Key(name.clone()));
                    check(p, v, at, out);
                    at.pop();
                }
            }
        }
        let known = |k: &String| props.is_some_and(|p| p.contains_key(k));
        match s.get("additionalProperties") {
            Some(Value::Bool(false)) => {
                let extra: Vec<String> = obj.keys().filter(|k| !known(k)).cloned().collect();
                if !extra.is_empty() {
                    out.push(issue(at, Kind::Additional(extra), value));
                }
            }
            Some(extra_schema) => {
                for (k, v) in obj.iter().filter(|(k, _)| !known(k)) {
                    at.push(Seg::Key(k.clone()));
                    check(extra_schema, v, at, out);
                    at.pop();
                }
            }
            None => {}
        }
    }
    if let (Value::Array(items), Some(item_schema)) = (value, s.get("items")) {
        for (i, v) in items.iter().enumerate() {
            at.push(Seg::Index(i));
            check(item_schema, v, at, out);
            at.pop();
        }
    }
}

/// Is `value` of the JSON Schema type `name`? Integers are numbers with no fraction (`1.0`
/// is one).
fn has_type(name: &Value, value: &Value) -> bool {
    match (name.as_str(), value) {
        (Some("null"), Value::Null)
        | (Some("boolean"), Value::Bool(_))
        | (Some("object"), Value::Object(_))
        | (Some("array"), Value::Array(_))
        | (Some("string"), Value::String(_))
        | (Some("number"), Value::Number(_)) => true,
        (Some("integer"), Value::Number(n)) => {
            n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        _ => false,
    }
}

/// Integers outside JavaScript's safe range where the schema wants an integer: Zod's `int()`
/// refuses them though JSON Schema's `integer` takes them (found with either validator).
pub(super) fn unsafe_integers(schema: &Value, value: &Value) -> Vec<Issue> {
    let mut out = Vec::new();
    walk_integers(schema, value, &mut Vec::new(), &mut out);
    out
}

fn walk_integers(schema: &Value, value: &Value, at: &mut Vec<Seg>, out: &mut Vec<Issue>) {
    let Value::Object(s) = schema else {
        return;
    };
    let wants_integer = match s.get("type") {
        Some(Value::String(t)) => t == "integer",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "integer"),
        _ => false,
    };
    if wants_integer
        && has_type(&Value::String("integer".into()), value)
        && let Some(f) = value.as_f64()
    {
        let max = super::MAX_SAFE_INTEGER as f64;
        if f > max {
            out.push(issue(at, Kind::UnsafeInteger(true), value));
        } else if f < -max {
            out.push(issue(at, Kind::UnsafeInteger(false), value));
        }
    }
    if let (Value::Object(obj), Some(Value::Object(props))) = (value, s.get("properties")) {
        for (name, p) in props {
            if let Some(v) = obj.get(name) {
                at.push(Seg::Key(name.clone()));
                walk_integers(p, v, at, out);
                at.pop();
            }
        }
    }
    if let (Value::Array(items), Some(item_schema)) = (value, s.get("items")) {
        for (i, v) in items.iter().enumerate() {
            at.push(Seg::Index(i));
            walk_integers(item_schema, v, at, out);
            at.pop();
        }
    }
}

/// JSON Schema equality: numbers compare by value (`1` equals `1.0`), the rest structurally.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i == j,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}
