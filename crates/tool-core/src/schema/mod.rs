//! The schema layer: each tool's input schema compiled once, inputs coerced and checked, and
//! failures rendered exactly as Claude Code renders them to the model.
//!
//! Rendering follows Claude Code's grouping: missing parameters first, then unexpected ones,
//! then type mismatches, each on its own line under `<Tool> failed due to the following
//! issue(s):`. Other kinds of failure (an enum value, a bound) are rendered as a JSON list of
//! issues, as Zod prints them.
//!
//! Two validators find the failures. With the `jsonschema` feature (on by default, and always
//! on in the orchestrator) it is the `jsonschema` crate, for any schema. Without it, a
//! structural validator of this crate checks the keywords tool schemas use (`type`,
//! `properties`, `required`, `additionalProperties`, `items`, `enum`, the numeric bounds, and
//! the annotations) with the same results, and refuses at compile time a schema with any other
//! keyword, so a lighter build never accepts what it cannot check.

// Compiled in every build: without the feature it is the validator, with it the tests compare
// the two.
#[cfg_attr(all(feature = "jsonschema", not(test)), allow(dead_code))]
mod structural;

use serde_json::{Map, Number, Value, json};

use crate::Error;

/// JavaScript's `Number.MAX_SAFE_INTEGER`: Zod's `int()` refuses integers beyond it.
const MAX_SAFE_INTEGER: i64 = 9_007_199_254_740_991;

/// The note Zod adds to a safe-integer issue.
const SAFE_INTEGER_NOTE: &str = "Integers must be within the safe integer range.";

/// How many bytes of an unparsable input are quoted back to the model.
const UNPARSABLE_PREVIEW_BYTES: usize = 200;

/// A compiled input schema.
#[derive(Debug, Clone)]
pub struct CompiledSchema {
    schema: Value,
    /// Top-level number fields whose one-element arrays are read as numbers (as Claude Code's
    /// Read does), marked `"x-semantic": true` in the tool's schema; the marker is removed from
    /// the schema the model is sent.
    semantic: std::collections::BTreeSet<String>,
    #[cfg(feature = "jsonschema")]
    validator: jsonschema::Validator,
}

/// Why an input was refused; [`InputError::render`] gives the model-facing text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputError {
    /// The input was a string that does not parse as a JSON object.
    Unparsable {
        /// The text as sent.
        raw: String,
    },
    /// The input did not satisfy the schema.
    Invalid {
        /// Required properties that are missing, as paths.
        missing: Vec<String>,
        /// Properties the schema does not allow.
        unexpected: Vec<String>,
        /// Type mismatches: path, expected, received.
        mismatched: Vec<(String, String, String)>,
        /// Other failures, as Zod-style issue objects.
        other: Vec<Value>,
    },
}

impl InputError {
    /// The text inside `<tool_use_error>InputValidationError: ...</tool_use_error>`.
    pub fn render(&self, tool_name: &str) -> String {
        match self {
            InputError::Unparsable { raw } => render_unparsable_input(tool_name, raw),
            InputError::Invalid {
                missing,
                unexpected,
                mismatched,
                other,
            } => {
                let mut lines: Vec<String> = Vec::new();
                lines.extend(
                    missing
                        .iter()
                        .map(|p| format!("The required parameter `{p}` is missing")),
                );
                lines.extend(
                    unexpected
                        .iter()
                        .map(|k| format!("An unexpected parameter `{k}` was provided")),
                );
                lines.extend(mismatched.iter().map(|(p, e, r)| {
                    format!("The parameter `{p}` type is expected as `{e}` but provided as `{r}`")
                }));
                // Beside those, every other issue is a line of its own too (Claude Code
                // 2.1.332; alone, they are the JSON list below).
                if !lines.is_empty() {
                    lines.extend(other.iter().map(|issue| {
                        format!(
                            "The parameter `{}` is invalid: {}",
                            issue_path(issue),
                            issue.get("message").and_then(Value::as_str).unwrap_or("")
                        )
                    }));
                }
                if lines.is_empty() {
                    serde_json::to_string_pretty(&Value::Array(other.clone())).unwrap_or_default()
                } else {
                    let noun = if lines.len() == 1 { "issue" } else { "issues" };
                    format!(
                        "{tool_name} failed due to the following {noun}:\n{}",
                        lines.join("\n")
                    )
                }
            }
        }
    }

    /// The whole tool_result text: `<tool_use_error>InputValidationError: ...</tool_use_error>`.
    pub fn to_tool_result_text(&self, tool_name: &str) -> String {
        crate::texts::wrap_tool_use_error(&format!(
            "InputValidationError: {}",
            self.render(tool_name)
        ))
    }
}

/// A Zod issue's `path` written as `a.b[0].c`.
fn issue_path(issue: &Value) -> String {
    let segs: Vec<Seg> = issue
        .get("path")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|p| match p {
            Value::Number(n) => Seg::Index(n.as_u64().map_or(0, |i| i as usize)),
            other => Seg::Key(
                other
                    .as_str()
                    .map_or_else(|| other.to_string(), str::to_owned),
            ),
        })
        .collect();
    path_string(&segs)
}

/// The message for an input that could not be parsed as JSON.
pub fn render_unparsable_input(tool_name: &str, raw: &str) -> String {
    let total = raw.len();
    let mut cut = total.min(UNPARSABLE_PREVIEW_BYTES);
    while !raw.is_char_boundary(cut) {
        cut -= 1;
    }
    format!(
        "{tool_name} was called with input that could not be parsed as JSON.\nYou sent (first {cut} of {total} bytes): {}\nCommon causes: unescaped backslashes in file paths (use / or \\\\), unescaped control characters, or truncated output. Retry with valid JSON.",
        &raw[..cut]
    )
}

impl CompiledSchema {
    /// Compile a schema. Fails when the schema itself is invalid, naming the problem.
    pub fn compile(mut schema: Value) -> Result<Self, Error> {
        let semantic = take_semantic_markers(&mut schema);
        #[cfg(feature = "jsonschema")]
        {
            let validator = jsonschema::validator_for(&schema)
                .map_err(|e| Error::InvalidSchema(e.to_string()))?;
            Ok(Self {
                schema,
                semantic,
                validator,
            })
        }
        #[cfg(not(feature = "jsonschema"))]
        {
            structural::supported(&schema).map_err(Error::InvalidSchema)?;
            Ok(Self { schema, semantic })
        }
    }

    /// The schema as the model is sent it (without `x-semantic` markers).
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// Take a model's input: parse a string input as JSON, coerce numeric and boolean strings
    /// where the schema wants numbers or booleans, then validate. Returns the input to use.
    pub fn check(&self, input: &Value) -> Result<Value, InputError> {
        let mut value = match input {
            Value::String(raw) => match serde_json::from_str::<Value>(raw) {
                Ok(v @ Value::Object(_)) => v,
                _ => return Err(InputError::Unparsable { raw: raw.clone() }),
            },
            Value::Object(_) => input.clone(),
            other => {
                return Err(InputError::Unparsable {
                    raw: other.to_string(),
                });
            }
        };
        coerce(&self.schema, &self.semantic, &mut value);
        let issues = self.issues(&value);
        if issues.is_empty() {
            return Ok(in_schema_order(&self.schema, value));
        }
        Err(self.describe(issues))
    }

    /// What is wrong with `value`, by the `jsonschema` crate.
    #[cfg(feature = "jsonschema")]
    fn issues(&self, value: &Value) -> Vec<Issue> {
        if self.validator.is_valid(value) {
            return structural::unsafe_integers(&self.schema, value);
        }
        let mut issues: Vec<Issue> = self
            .validator
            .iter_errors(value)
            .map(|err| Issue::from_jsonschema(&err))
            .collect();
        issues.extend(structural::unsafe_integers(&self.schema, value));
        issues
    }

    /// What is wrong with `value`, by the structural validator.
    #[cfg(not(feature = "jsonschema"))]
    fn issues(&self, value: &Value) -> Vec<Issue> {
        structural::issues(&self.schema, value)
    }

    fn describe(&self, issues: Vec<Issue>) -> InputError {
        let mut missing: Vec<(usize, String)> = Vec::new();
        let mut unexpected: Vec<String> = Vec::new();
        let mut mismatched: Vec<(usize, (String, String, String))> = Vec::new();
        let mut other: Vec<(usize, Value)> = Vec::new();
        for Issue {
            segments,
            kind,
            instance,
        } in issues
        {
            match kind {
                Kind::Required(name) => {
                    let mut segs = segments.clone();
                    segs.push(Seg::Key(name));
                    missing.push((self.order_of(&segs), path_string(&segs)));
                }
                Kind::Additional(keys) => {
                    for k in keys {
                        let mut segs = segments.clone();
                        segs.push(Seg::Key(k));
                        unexpected.push(path_string(&segs));
                    }
                }
                Kind::Type => {
                    let expected = expected_type_word(self.schema_at(&segments), &instance);
                    mismatched.push((
                        self.order_of(&segments),
                        (
                            path_string(&segments),
                            expected,
                            received_type_word(&instance).to_owned(),
                        ),
                    ));
                }
                kind => other.push((self.order_of(&segments), zod_issue(&kind, &segments))),
            }
        }
        missing.sort_by_key(|(i, _)| *i);
        // In the schema's property order, as Zod checks an object's fields.
        other.sort_by_key(|(i, _)| *i);
        let other: Vec<Value> = other.into_iter().map(|(_, v)| v).collect();
        mismatched.sort_by_key(|(i, _)| *i);
        InputError::Invalid {
            missing: missing.into_iter().map(|(_, p)| p).collect(),
            unexpected,
            mismatched: mismatched.into_iter().map(|(_, m)| m).collect(),
            other,
        }
    }

    /// Position of the first segment's property in the schema, for Zod's issue order.
    fn order_of(&self, segs: &[Seg]) -> usize {
        let Some(Seg::Key(first)) = segs.first() else {
            return 0;
        };
        self.schema
            .get("properties")
            .and_then(Value::as_object)
            .and_then(|p| p.keys().position(|k| k == first))
            .unwrap_or(usize::MAX)
    }

    fn schema_at(&self, segs: &[Seg]) -> Option<&Value> {
        let mut s = &self.schema;
        for seg in segs {
            s = match seg {
                Seg::Key(k) => s.get("properties")?.get(k)?,
                Seg::Index(_) => s.get("items")?,
            };
        }
        Some(s)
    }
}

/// One place in an input.
#[derive(Debug, Clone, PartialEq)]
enum Seg {
    Key(String),
    Index(usize),
}

/// One failure, whichever validator found it.
#[derive(Debug, Clone, PartialEq)]
struct Issue {
    /// Where, in the input.
    segments: Vec<Seg>,
    kind: Kind,
    /// The value found there.
    instance: Value,
}

/// The kinds of failure the rendering tells apart.
#[derive(Debug, Clone, PartialEq)]
enum Kind {
    /// A required property is missing.
    Required(String),
    /// Properties the schema does not allow.
    Additional(Vec<String>),
    /// The value has the wrong type.
    Type,
    /// The value is not one of these (a JSON array).
    Enum(Value),
    /// Below `minimum`.
    Minimum(Value),
    /// Not above `exclusiveMinimum`.
    ExclusiveMinimum(Value),
    /// Above `maximum`.
    Maximum(Value),
    /// Not below `exclusiveMaximum`.
    ExclusiveMaximum(Value),
    /// An integer outside JavaScript's safe range (Zod's `int()`); true when too big.
    UnsafeInteger(bool),
    /// Anything else, with the validator's message.
    #[cfg_attr(not(feature = "jsonschema"), allow(dead_code))]
    Custom(String),
}

#[cfg(feature = "jsonschema")]
impl Issue {
    fn from_jsonschema(err: &jsonschema::ValidationError<'_>) -> Self {
        use jsonschema::error::ValidationErrorKind as K;
        let segments = err
            .instance_path()
            .segments()
            .map(|s| match s {
                jsonschema::paths::LocationSegment::Property(p) => Seg::Key(p.into_owned()),
                jsonschema::paths::LocationSegment::Index(i) => Seg::Index(i),
            })
            .collect();
        let kind = match err.kind() {
            K::Required { property } => Kind::Required(
                property
                    .as_str()
                    .map(str::to_owned)
                    .unwrap_or_else(|| property.to_string()),
            ),
            K::AdditionalProperties { unexpected } => Kind::Additional(unexpected.clone()),
            K::Type { .. } => Kind::Type,
            K::Enum { options } => Kind::Enum(options.as_ref().clone()),
            K::Minimum { limit } => Kind::Minimum(limit.clone()),
            K::ExclusiveMinimum { limit } => Kind::ExclusiveMinimum(limit.clone()),
            K::Maximum { limit } => Kind::Maximum(limit.clone()),
            K::ExclusiveMaximum { limit } => Kind::ExclusiveMaximum(limit.clone()),
            _ => Kind::Custom(err.to_string()),
        };
        Issue {
            segments,
            kind,
            instance: err.instance().clone().into_owned(),
        }
    }
}

fn path_string(segs: &[Seg]) -> String {
    let mut out = String::new();
    for s in segs {
        match s {
            Seg::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Seg::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

fn declared_types(schema: Option<&Value>) -> Vec<&str> {
    match schema.and_then(|s| s.get("type")) {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// The word Zod uses for what it expected: integers are `number` unless the value is a
/// fractional number, in which case Zod's integer check says `int`.
fn expected_type_word(schema: Option<&Value>, instance: &Value) -> String {
    let types = declared_types(schema);
    let Some(first) = types
        .iter()
        .find(|t| **t != "null")
        .copied()
        .or(types.first().copied())
    else {
        return "unknown".to_owned();
    };
    match first {
        "integer" if instance.is_number() => "int".to_owned(),
        "integer" | "number" => "number".to_owned(),
        other => other.to_owned(),
    }
}

/// A JSON value's type as Claude Code's validation messages name it (`provided as ...`).
pub fn received_type_word(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn zod_issue(kind: &Kind, segs: &[Seg]) -> Value {
    let path: Vec<Value> = segs
        .iter()
        .map(|s| match s {
            Seg::Key(k) => Value::String(k.clone()),
            Seg::Index(i) => json!(i),
        })
        .collect();
    match kind {
        Kind::Enum(options) => {
            let opts: Vec<String> = options
                .as_array()
                .map(|a| a.iter().map(|o| o.to_string()).collect())
                .unwrap_or_default();
            json!({"code": "invalid_value", "values": options, "path": path,
                   "message": format!("Invalid option: expected one of {}", opts.join("|"))})
        }
        Kind::Minimum(limit) => {
            json!({"origin": "number", "code": "too_small", "minimum": limit, "inclusive": true, "path": path,
                   "message": format!("Too small: expected number to be >={limit}")})
        }
        Kind::ExclusiveMinimum(limit) => {
            json!({"origin": "number", "code": "too_small", "minimum": limit, "inclusive": false, "path": path,
                   "message": format!("Too small: expected number to be >{limit}")})
        }
        Kind::Maximum(limit) => {
            json!({"origin": "number", "code": "too_big", "maximum": limit, "inclusive": true, "path": path,
                   "message": format!("Too big: expected number to be <={limit}")})
        }
        Kind::ExclusiveMaximum(limit) => {
            json!({"origin": "number", "code": "too_big", "maximum": limit, "inclusive": false, "path": path,
                   "message": format!("Too big: expected number to be <{limit}")})
        }
        Kind::UnsafeInteger(true) => {
            json!({"code": "too_big", "maximum": MAX_SAFE_INTEGER, "note": SAFE_INTEGER_NOTE,
                   "origin": "int", "inclusive": true, "path": path,
                   "message": format!("Too big: expected int to be <={MAX_SAFE_INTEGER}")})
        }
        Kind::UnsafeInteger(false) => {
            json!({"code": "too_small", "minimum": -MAX_SAFE_INTEGER, "note": SAFE_INTEGER_NOTE,
                   "origin": "int", "inclusive": true, "path": path,
                   "message": format!("Too small: expected int to be >={}", -MAX_SAFE_INTEGER)})
        }
        Kind::Custom(message) => json!({"code": "custom", "path": path, "message": message}),
        Kind::Required(_) | Kind::Additional(_) | Kind::Type => {
            json!({"code": "custom", "path": path, "message": "invalid input"})
        }
    }
}

/// Coerce top-level properties the way Claude Code's `semanticNumber` and `semanticBoolean`
/// do: a string (or a one-element array) holding a number becomes that number where the schema
/// wants a number; `"true"`/`"false"` become booleans where it wants a boolean. Integral floats
/// become integers where the schema wants an integer.
fn coerce(schema: &Value, semantic: &std::collections::BTreeSet<String>, value: &mut Value) {
    let (Some(props), Value::Object(obj)) =
        (schema.get("properties").and_then(Value::as_object), value)
    else {
        return;
    };
    for (key, v) in obj.iter_mut() {
        let Some(prop) = props.get(key) else { continue };
        let types = declared_types(Some(prop));
        if types.contains(&"integer") || types.contains(&"number") {
            // Numbers and numeric strings are read everywhere; one-element arrays only in the
            // fields marked semantic (recorded: Read's take `[2]`, Grep's and Bash's refuse it).
            // An integer stays as it was sent (a hook sees it unchanged); other numbers are
            // written as JavaScript writes them, integral ones without a fraction (recorded:
            // hp_grep_limits).
            if let Value::Number(num) = v
                && (num.is_i64() || num.is_u64())
            {
                continue;
            }
            if (!v.is_array() || semantic.contains(key))
                && let Some(n) = js_number(v)
            {
                *v = number_value(n, true);
            }
        } else if types.contains(&"boolean") {
            match v.as_str() {
                Some("true") => *v = Value::Bool(true),
                Some("false") => *v = Value::Bool(false),
                _ => {}
            }
        }
    }
}

/// The input's keys in the order the schema declares its properties (others after them, as
/// sent): Claude Code's parser rebuilds the input that way, and hooks see it so (recorded:
/// hp_grep_params).
fn in_schema_order(schema: &Value, value: Value) -> Value {
    let (Some(props), Value::Object(mut obj)) = (
        schema.get("properties").and_then(Value::as_object),
        value.clone(),
    ) else {
        return value;
    };
    let mut out = serde_json::Map::new();
    for key in props.keys() {
        if let Some(v) = obj.remove(key) {
            out.insert(key.clone(), v);
        }
    }
    out.extend(obj);
    Value::Object(out)
}

/// Remove the `"x-semantic": true` markers of the top-level properties, returning their names.
fn take_semantic_markers(schema: &mut Value) -> std::collections::BTreeSet<String> {
    let mut names = std::collections::BTreeSet::new();
    if let Some(Value::Object(props)) = schema.get_mut("properties") {
        for (name, prop) in props.iter_mut() {
            if let Value::Object(p) = prop
                && p.remove(SEMANTIC_MARKER) == Some(Value::Bool(true))
            {
                names.insert(name.clone());
            }
        }
    }
    names
}

/// The marker of a property whose one-element arrays are read as numbers.
pub const SEMANTIC_MARKER: &str = "x-semantic";

/// JavaScript's `Number(v)` for the values Claude Code coerces: numbers, numeric strings and
/// one-element arrays of those. Anything else is left for the schema to reject.
fn js_number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => {
            let t = s.trim();
            if t.is_empty()
                || t.eq_ignore_ascii_case("nan")
                || t.to_ascii_lowercase().contains("inf")
            {
                return None;
            }
            t.parse::<f64>().ok().filter(|f| f.is_finite())
        }
        Value::Array(items) if items.len() == 1 => match &items[0] {
            Value::Number(_) | Value::String(_) | Value::Array(_) => js_number(&items[0]),
            _ => None,
        },
        _ => None,
    }
}

fn number_value(n: f64, prefer_int: bool) -> Value {
    if prefer_int && n.fract() == 0.0 && n.abs() < 9.0e15 {
        #[allow(clippy::cast_possible_truncation)]
        return Value::Number(Number::from(n as i64));
    }
    Number::from_f64(n)
        .map(Value::Number)
        .unwrap_or(Value::Null)
}

/// Convenience for tests and hosts: an object schema from `(name, type, required)` triples,
/// with unknown keys rejected.
pub fn object_schema(props: &[(&str, &str, bool)]) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for (name, ty, req) in props {
        properties.insert((*name).to_owned(), json!({"type": ty}));
        if *req {
            required.push(Value::String((*name).to_owned()));
        }
    }
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_schema() -> CompiledSchema {
        let mut schema = object_schema(&[
            ("file_path", "string", true),
            ("offset", "integer", false),
            ("limit", "integer", false),
            ("allow_large", "boolean", false),
        ]);
        for field in ["offset", "limit"] {
            schema["properties"][field][SEMANTIC_MARKER] = json!(true);
        }
        CompiledSchema::compile(schema).unwrap()
    }

    fn render(input: Value) -> String {
        read_schema().check(&input).unwrap_err().render("Read")
    }

    #[test]
    fn renders_each_kind_as_claude_code_does() {
        let cases: &[(Value, &str)] = &[
            (
                json!({"file_path": 12345}),
                "Read failed due to the following issue:\nThe parameter `file_path` type is expected as `string` but provided as `number`",
            ),
            (
                json!({"path": "/x"}),
                "Read failed due to the following issues:\nThe required parameter `file_path` is missing\nAn unexpected parameter `path` was provided",
            ),
            (
                json!({"file_path": "/x", "offset": 1.5}),
                "Read failed due to the following issue:\nThe parameter `offset` type is expected as `int` but provided as `number`",
            ),
            (
                json!({"file_path": "/x", "offset": "abc"}),
                "Read failed due to the following issue:\nThe parameter `offset` type is expected as `number` but provided as `string`",
            ),
            (
                json!({"file_path": "/x", "offset": null}),
                "Read failed due to the following issue:\nThe parameter `offset` type is expected as `number` but provided as `null`",
            ),
            (
                json!({"file_path": "/x", "allow_large": "yes"}),
                "Read failed due to the following issue:\nThe parameter `allow_large` type is expected as `boolean` but provided as `string`",
            ),
            (
                json!({"file_path": true, "limit": [1], "extra": 1, "more": 2}),
                "Read failed due to the following issues:\nAn unexpected parameter `extra` was provided\nAn unexpected parameter `more` was provided\nThe parameter `file_path` type is expected as `string` but provided as `boolean`",
            ),
        ];
        for (input, want) in cases {
            assert_eq!(render(input.clone()), *want, "input {input}");
        }
    }

    #[test]
    fn coerces_numeric_and_boolean_strings() {
        let s = read_schema();
        let v = s
            .check(&json!({"file_path": "/x", "offset": "2", "limit": [3], "allow_large": "true"}))
            .unwrap();
        assert_eq!(
            v,
            json!({"file_path": "/x", "offset": 2, "limit": 3, "allow_large": true})
        );
        let v = s
            .check(&json!({"file_path": "/x", "offset": " 3 ", "limit": 1e3}))
            .unwrap();
        assert_eq!(v, json!({"file_path": "/x", "offset": 3, "limit": 1000}));
        assert!(s.check(&json!({"file_path": "/x", "limit": true})).is_err());
    }

    #[test]
    fn string_input_is_parsed_or_reported() {
        let s = read_schema();
        assert_eq!(
            s.check(&json!("{\"file_path\": \"/a\"}")).unwrap(),
            json!({"file_path": "/a"})
        );
        let raw = "{\"file_path\": \"/tmp/x";
        let text = s
            .check(&json!(raw))
            .unwrap_err()
            .to_tool_result_text("Read");
        assert_eq!(
            text,
            format!(
                "<tool_use_error>InputValidationError: Read was called with input that could not be parsed as JSON.\nYou sent (first {n} of {n} bytes): {raw}\nCommon causes: unescaped backslashes in file paths (use / or \\\\), unescaped control characters, or truncated output. Retry with valid JSON.</tool_use_error>",
                n = raw.len()
            )
        );
        let long = format!("{{\"a\": \"{}", "é".repeat(300));
        let msg = render_unparsable_input("Read", &long);
        assert!(
            msg.contains(&format!("(first 199 of {} bytes)", long.len())),
            "{msg}"
        );
    }

    #[test]
    fn other_failures_render_as_issue_list() {
        let s = CompiledSchema::compile(
            json!({"type": "object", "properties": {"mode": {"enum": ["a", "b"]}}}),
        )
        .unwrap();
        let text = s.check(&json!({"mode": "c"})).unwrap_err().render("T");
        let issues: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(issues[0]["code"], "invalid_value");
        assert_eq!(issues[0]["path"], json!(["mode"]));
    }

    #[cfg(not(feature = "jsonschema"))]
    #[test]
    fn without_the_feature_unknown_keywords_are_refused() {
        let err = CompiledSchema::compile(
            json!({"type": "object", "properties": {"p": {"type": "string", "pattern": "^a"}}}),
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("#/properties/p/pattern: the keyword `pattern` needs tool-core's `jsonschema` feature"),
            "{err}"
        );
        assert!(CompiledSchema::compile(json!({"anyOf": []})).is_err());
        assert!(
            CompiledSchema::compile(json!({"type": "object", "additionalProperties": false}))
                .is_ok()
        );
    }

    /// Schemas shaped like the built-in tools' (schemars output) and a few more keywords.
    #[cfg(feature = "jsonschema")]
    fn differential_schemas() -> Vec<Value> {
        vec![
            json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "GrepInput",
            "type": "object", "additionalProperties": false, "required": ["pattern"],
            "properties": {
                "pattern": {"type": "string", "description": "p"},
                "path": {"type": ["string", "null"]},
                "output_mode": {"type": ["string", "null"], "enum": ["content", "files_with_matches", "count", null]},
                "-A": {"type": ["integer", "null"], "format": "int64"},
                "head_limit": {"type": ["integer", "null"], "minimum": 0},
                "multiline": {"type": ["boolean", "null"], "default": null}
            }}),
            json!({"type": "object", "required": ["edits", "file_path"], "additionalProperties": false,
            "properties": {
                "file_path": {"type": "string"},
                "edits": {"type": "array", "items": {"type": "object", "additionalProperties": false,
                          "required": ["old_string", "new_string"],
                          "properties": {"old_string": {"type": "string"}, "new_string": {"type": "string"},
                                         "replace_all": {"type": "boolean"}}}},
                "ratio": {"type": "number", "exclusiveMinimum": 0, "maximum": 1.5},
                "level": {"type": "integer", "minimum": -3, "exclusiveMaximum": 10}
            }}),
            json!({"type": "object", "properties": {"tags": {"type": "array", "items": {"enum": [1, "a", true]}}},
                   "additionalProperties": {"type": "integer"}}),
        ]
    }

    /// A random JSON value, mostly of the kinds inputs hold.
    #[cfg(feature = "jsonschema")]
    fn random_value(next: &mut dyn FnMut() -> u64, depth: usize) -> Value {
        let keys = [
            "pattern",
            "path",
            "output_mode",
            "-A",
            "head_limit",
            "multiline",
            "file_path",
            "edits",
            "old_string",
            "new_string",
            "replace_all",
            "ratio",
            "level",
            "tags",
            "x",
        ];
        let words = [
            "content",
            "count",
            "a",
            "",
            "1",
            "true",
            "files_with_matches",
        ];
        match next() % if depth > 2 { 6 } else { 8 } {
            0 => Value::Null,
            1 => Value::Bool(next().is_multiple_of(2)),
            2 => json!((next() % 40) as i64 - 10),
            3 => json!(((next() % 400) as f64 - 100.0) / 8.0),
            4 | 5 => json!(words[(next() % words.len() as u64) as usize]),
            6 => Value::Array(
                (0..next() % 4)
                    .map(|_| random_value(next, depth + 1))
                    .collect(),
            ),
            _ => {
                let mut o = Map::new();
                for _ in 0..next() % 5 {
                    let k = keys[(next() % keys.len() as u64) as usize];
                    o.insert(k.to_owned(), random_value(next, depth + 1));
                }
                Value::Object(o)
            }
        }
    }

    /// The structural validator finds what the `jsonschema` crate finds, rendered the same, on
    /// thousands of random inputs.
    #[cfg(feature = "jsonschema")]
    #[test]
    fn structural_validator_agrees_with_jsonschema() {
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut invalid = 0;
        for schema in differential_schemas() {
            structural::supported(&schema).unwrap();
            let compiled = CompiledSchema::compile(schema.clone()).unwrap();
            for _ in 0..3000 {
                let mut input = random_value(&mut next, 0);
                if !input.is_object() {
                    input = json!({"pattern": input});
                }
                let full = compiled.describe(compiled.issues(&input));
                let light = compiled.describe(structural::issues(&schema, &input));
                let valid = compiled.issues(&input).is_empty();
                assert_eq!(
                    structural::issues(&schema, &input).is_empty(),
                    valid,
                    "validity of {input} under {schema}"
                );
                if !valid {
                    invalid += 1;
                    assert_eq!(light.render("T"), full.render("T"), "input {input}");
                }
            }
        }
        assert!(
            invalid > 1000,
            "too few invalid inputs generated: {invalid}"
        );
    }

    /// Recorded from Claude Code 2.1.332 (explore seeds 1 and 2).
    #[test]
    fn other_issues_are_lines_beside_the_others_and_unsafe_integers_are_refused() {
        let grep = CompiledSchema::compile(json!({"type": "object", "additionalProperties": false,
            "properties": {"pattern": {"type": "string"}, "context": {"type": "number"},
                           "output_mode": {"type": "string", "enum": ["content", "files_with_matches", "count"]}}}))
        .unwrap();
        assert_eq!(
            grep.check(&json!({"context": "x", "output_mode": "bogus"}))
                .unwrap_err()
                .render("Grep"),
            "Grep failed due to the following issues:\nThe parameter `context` type is expected as `number` but provided as `string`\nThe parameter `output_mode` is invalid: Invalid option: expected one of \"content\"|\"files_with_matches\"|\"count\""
        );
        let read = read_schema();
        assert_eq!(
            read.check(&json!({"file_path": "/x", "offset": 1e20, "limit": 1.5}))
                .unwrap_err()
                .render("Read"),
            "Read failed due to the following issues:\nThe parameter `limit` type is expected as `int` but provided as `number`\nThe parameter `offset` is invalid: Too big: expected int to be <=9007199254740991"
        );
        let alone = read
            .check(&json!({"file_path": "/x", "offset": 1e20}))
            .unwrap_err()
            .render("Read");
        let issues: Value = serde_json::from_str(&alone).unwrap();
        assert_eq!(
            issues,
            json!([{"code": "too_big", "maximum": 9007199254740991_i64, "note": "Integers must be within the safe integer range.",
                    "origin": "int", "inclusive": true, "path": ["offset"], "message": "Too big: expected int to be <=9007199254740991"}])
        );
        assert!(
            read.check(&json!({"file_path": "/x", "offset": 9007199254740991_i64}))
                .is_ok()
        );
    }

    #[test]
    fn invalid_schema_is_an_error() {
        assert!(CompiledSchema::compile(json!({"type": 5})).is_err());
    }
}
