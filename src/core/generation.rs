//! The schema the model was given (`docs/requests.md`): the generation schemas a provider
//! request carries, read from the request body as sent, whatever the provider.
//!
//! A request offers one schema per declared tool (the called tool's parameters govern a
//! tool-call proposal) and at most one text format schema (it governs a text proposal).
//! [`RequestSchemas::read`] finds them at every path the providers use (field paths from
//! each provider's API reference, gathered in `docs/requests.md#where-the-schemas-are`):
//!
//! * tools: OpenAI Chat, Ollama, Cohere `tools[].function.{name, parameters, strict}`;
//!   OpenAI Responses `tools[] = {type: "function", name, parameters, strict}`; Anthropic
//!   `tools[].{name, input_schema, strict}`; Gemini `tools[].functionDeclarations[].{name,
//!   parametersJsonSchema | parameters}` (snake_case too); Bedrock Converse
//!   `toolConfig.tools[].toolSpec.{name, inputSchema.json, strict}`;
//! * text: OpenAI Chat `response_format.json_schema.{name, schema, strict}` (Cohere's
//!   `response_format.json_schema` is the schema itself); OpenAI Responses
//!   `text.format.{name, schema, strict}`; Anthropic `output_config.format.schema` (or the
//!   beta `output_format.schema`); Gemini `generationConfig.responseJsonSchema` or
//!   `responseSchema` (an OpenAPI 3.0 subset, converted by [`openapi_to_json_schema`]);
//!   Bedrock `outputConfig.textFormat.structure.jsonSchema.{schema (a JSON string), name}`;
//!   Ollama `format` (an object).
//!
//! UI-free: the pipeline uses the schema as a capture's contract when no server contract
//! reaches it (`contract_from: "request"`).

use crate::core::escape::quote;
use serde_json::{Map, Value};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// Which part of a request a generation schema governs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SchemaSource {
    /// A declared tool's parameters: governs a call to that tool.
    Tool,
    /// The text (response) format: governs a text proposal.
    Text,
}

impl SchemaSource {
    /// `tool` or `text`.
    pub fn as_str(self) -> &'static str {
        match self {
            SchemaSource::Tool => "tool",
            SchemaSource::Text => "text",
        }
    }
}

/// One generation schema, as the request sent it (a Gemini `responseSchema` or
/// `parameters` already converted to JSON Schema).
#[derive(Debug, Clone, PartialEq)]
pub struct GenerationSchema {
    /// The tool's name, or the text format's `name`; [`TEXT_NAME`] when the format has none.
    pub name: String,
    /// Tool parameters or text format.
    pub source: SchemaSource,
    /// The request's own `strict: true` beside the schema (false when absent: a provider
    /// with no such flag gives false).
    pub strict: bool,
    /// [`content_hash`] of `schema`: equal schemas share one compiled contract.
    pub hash: u64,
    /// The schema (JSON Schema).
    pub schema: Arc<Value>,
    /// JSON Pointer of the schema in the request body (`/tools/0/function/parameters`).
    pub pointer: String,
}

/// A generation schema the request names but that cannot be used (a Bedrock schema string
/// that is not JSON, a schema that is not an object): the `CONTRACT_ERROR` of the captures
/// it governs.
#[derive(Debug, Clone, PartialEq)]
pub struct SchemaProblem {
    /// The tool or format name.
    pub name: String,
    /// JSON Pointer in the request body of the broken value.
    pub pointer: String,
    /// What is wrong.
    pub message: String,
}

/// The name of a text format schema that carries none (Anthropic, Gemini, Ollama).
pub const TEXT_NAME: &str = "response";

/// Every generation schema of one request body.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestSchemas {
    /// One per declared function tool, in request order.
    pub tools: Vec<Result<GenerationSchema, SchemaProblem>>,
    /// The text format schema, when the request asks for structured text.
    pub text: Option<Result<GenerationSchema, SchemaProblem>>,
}

/// The 64-bit fingerprint of a schema's content (its compact JSON text, keys sorted;
/// SipHash-1-3 with fixed keys, so the same in every process of one build).
pub fn content_hash(schema: &Value) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    schema.to_string().hash(&mut h);
    h.finish()
}

/// `/a/b` for pointer tokens (RFC 6901 escaping).
fn pointer(tokens: &[&str]) -> String {
    tokens
        .iter()
        .map(|t| format!("/{}", t.replace('~', "~0").replace('/', "~1")))
        .collect()
}

/// `obj[camel]`, else `obj[snake]` (Gemini's proto JSON accepts both casings), with the
/// key found.
fn either<'a>(obj: &'a Value, camel: &'a str, snake: &'a str) -> Option<(&'a str, &'a Value)> {
    obj.get(camel)
        .map(|v| (camel, v))
        .or_else(|| obj.get(snake).map(|v| (snake, v)))
        .filter(|(_, v)| !v.is_null())
}

fn strict_of(v: Option<&Value>) -> bool {
    v.and_then(Value::as_bool) == Some(true)
}

fn schema(
    name: &str,
    source: SchemaSource,
    strict: bool,
    value: &Value,
    at: String,
) -> Result<GenerationSchema, SchemaProblem> {
    if !(value.is_object() || value.is_boolean()) {
        return Err(SchemaProblem {
            name: name.to_owned(),
            pointer: at,
            message: format!(
                "is not a schema: a schema is an object or a boolean, found {}",
                crate::core::text::json_kind(value)
            ),
        });
    }
    Ok(GenerationSchema {
        name: name.to_owned(),
        source,
        strict,
        hash: content_hash(value),
        schema: Arc::new(value.clone()),
        pointer: at,
    })
}

/// The members of a request body that [`RequestSchemas::read`] reads (every other member,
/// `messages` included, is never looked at): a body pruned to these has the same
/// generation schemas. The pre-pass keeps only these of a batch input line's body
/// (`crate::core::request::input_of_bytes`); a path added to `read` must add its first
/// key here (the test `a_light_read_finds_what_a_whole_read_finds` in `tests/requests.rs`
/// reads every sample both ways).
pub const BODY_KEYS: &[&str] = &[
    "tools",
    "toolConfig",
    "response_format",
    "text",
    "output_config",
    "output_format",
    "generationConfig",
    "generation_config",
    "outputConfig",
    "format",
];

impl RequestSchemas {
    /// Reads the generation schemas of a provider request body (module docs for the
    /// paths). A body with none gives empty schemas.
    pub fn read(body: &Value) -> RequestSchemas {
        let mut out = RequestSchemas::default();
        if let Some(Value::Array(tools)) = body.get("tools") {
            for (i, t) in tools.iter().enumerate() {
                let n = i.to_string();
                read_tool(t, &n, &mut out.tools);
            }
        }
        if let Some(Value::Array(tools)) = body
            .get("toolConfig")
            .and_then(|c| c.get("tools"))
            .filter(|t| t.is_array())
        {
            for (i, t) in tools.iter().enumerate() {
                let Some(spec) = t.get("toolSpec") else {
                    continue;
                };
                let Some(name) = spec.get("name").and_then(Value::as_str) else {
                    continue;
                };
                let n = i.to_string();
                let Some(json) = spec.get("inputSchema").and_then(|s| s.get("json")) else {
                    continue;
                };
                out.tools.push(schema(
                    name,
                    SchemaSource::Tool,
                    strict_of(spec.get("strict")),
                    json,
                    pointer(&["toolConfig", "tools", &n, "toolSpec", "inputSchema", "json"]),
                ));
            }
        }
        out.text = read_text(body);
        out
    }

    /// The generation schema that governed a proposal: the called tool's when `tool` is
    /// given (`None` when the request declares no such tool), else the text format's.
    pub fn for_proposal(
        &self,
        tool: Option<&str>,
    ) -> Option<&Result<GenerationSchema, SchemaProblem>> {
        match tool {
            Some(t) => self.tools.iter().find(|s| match s {
                Ok(g) => g.name == t,
                Err(p) => p.name == t,
            }),
            None => self.text.as_ref(),
        }
    }

    /// Whether the request carries no generation schema at all.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty() && self.text.is_none()
    }

    /// The fingerprint of everything read (names, flags, pointers and schema hashes):
    /// requests with equal fingerprints share one entry in memory.
    pub fn fingerprint(&self) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        let mut one = |s: &Result<GenerationSchema, SchemaProblem>| match s {
            Ok(g) => (0u8, &g.name, g.source, g.strict, g.hash, &g.pointer).hash(&mut h),
            Err(p) => (1u8, &p.name, &p.pointer, &p.message).hash(&mut h),
        };
        for t in &self.tools {
            one(t);
        }
        if let Some(t) = &self.text {
            one(t);
        }
        h.finish()
    }
}

/// One entry of a request's `tools` array, of whichever provider.
fn read_tool(t: &Value, n: &str, out: &mut Vec<Result<GenerationSchema, SchemaProblem>>) {
    // OpenAI Chat, Ollama, Cohere: {type: "function", function: {name, parameters, strict}}
    if let Some(f) = t.get("function").filter(|f| f.is_object()) {
        if let Some(name) = f.get("name").and_then(Value::as_str) {
            let params = f.get("parameters").cloned().unwrap_or_else(empty_object);
            out.push(schema(
                name,
                SchemaSource::Tool,
                strict_of(f.get("strict")),
                &params,
                pointer(&["tools", n, "function", "parameters"]),
            ));
        }
        return;
    }
    // Gemini: {functionDeclarations: [{name, parametersJsonSchema | parameters}]}
    if let Some((key, Value::Array(decls))) =
        either(t, "functionDeclarations", "function_declarations")
    {
        for (j, d) in decls.iter().enumerate() {
            let Some(name) = d.get("name").and_then(Value::as_str) else {
                continue;
            };
            let j = j.to_string();
            let found = if let Some((k, v)) =
                either(d, "parametersJsonSchema", "parameters_json_schema")
            {
                Some((k, v.clone()))
            } else {
                either(d, "parameters", "parameters").map(|(k, v)| (k, openapi_to_json_schema(v)))
            };
            let (k, params) = found.unwrap_or(("parameters", empty_object()));
            out.push(schema(
                name,
                SchemaSource::Tool,
                false,
                &params,
                pointer(&["tools", n, key, &j, k]),
            ));
        }
        return;
    }
    let Some(name) = t.get("name").and_then(Value::as_str) else {
        return;
    };
    // Anthropic: {name, input_schema, strict}
    if let Some(s) = t.get("input_schema") {
        out.push(schema(
            name,
            SchemaSource::Tool,
            strict_of(t.get("strict")),
            s,
            pointer(&["tools", n, "input_schema"]),
        ));
        return;
    }
    // OpenAI Responses: {type: "function", name, parameters, strict}
    if t.get("type").and_then(Value::as_str) == Some("function") {
        let params = t.get("parameters").cloned().unwrap_or_else(empty_object);
        out.push(schema(
            name,
            SchemaSource::Tool,
            strict_of(t.get("strict")),
            &params,
            pointer(&["tools", n, "parameters"]),
        ));
    }
}

fn empty_object() -> Value {
    Value::Object(Map::new())
}

/// The text format schema of a request body, of whichever provider.
fn read_text(body: &Value) -> Option<Result<GenerationSchema, SchemaProblem>> {
    let text = SchemaSource::Text;
    // OpenAI Chat: response_format {type: json_schema, json_schema: {name, schema, strict}};
    // Cohere v2: response_format {type: json_object, json_schema: {..the schema..}}
    if let Some(js) = body
        .get("response_format")
        .and_then(|f| f.get("json_schema"))
        && js.is_object()
    {
        if let Some(s) = js.get("schema") {
            let name = js.get("name").and_then(Value::as_str).unwrap_or(TEXT_NAME);
            return Some(schema(
                name,
                text,
                strict_of(js.get("strict")),
                s,
                pointer(&["response_format", "json_schema", "schema"]),
            ));
        }
        return Some(schema(
            TEXT_NAME,
            text,
            false,
            js,
            pointer(&["response_format", "json_schema"]),
        ));
    }
    // OpenAI Responses: text.format {type: json_schema, name, schema, strict}
    if let Some(f) = body.get("text").and_then(|t| t.get("format"))
        && f.get("type").and_then(Value::as_str) == Some("json_schema")
        && let Some(s) = f.get("schema")
    {
        let name = f.get("name").and_then(Value::as_str).unwrap_or(TEXT_NAME);
        return Some(schema(
            name,
            text,
            strict_of(f.get("strict")),
            s,
            pointer(&["text", "format", "schema"]),
        ));
    }
    // Anthropic: output_config.format.schema (GA), output_format.schema (beta)
    for (outer, tokens) in [
        (
            body.get("output_config").and_then(|c| c.get("format")),
            ["output_config", "format", "schema"].as_slice(),
        ),
        (
            body.get("output_format"),
            ["output_format", "schema"].as_slice(),
        ),
    ] {
        if let Some(s) = outer.and_then(|f| f.get("schema")) {
            return Some(schema(TEXT_NAME, text, false, s, pointer(tokens)));
        }
    }
    // Gemini: generationConfig.responseJsonSchema (JSON Schema) or responseSchema (OpenAPI)
    if let Some((g, config)) = either(body, "generationConfig", "generation_config") {
        if let Some((k, s)) = either(config, "responseJsonSchema", "response_json_schema") {
            return Some(schema(TEXT_NAME, text, false, s, pointer(&[g, k])));
        }
        if let Some((k, s)) = either(config, "responseSchema", "response_schema") {
            let converted = openapi_to_json_schema(s);
            return Some(schema(TEXT_NAME, text, false, &converted, pointer(&[g, k])));
        }
    }
    // Bedrock Converse: outputConfig.textFormat.structure.jsonSchema.schema, a JSON string
    if let Some(js) = body
        .get("outputConfig")
        .and_then(|c| c.get("textFormat"))
        .and_then(|f| f.get("structure"))
        .and_then(|s| s.get("jsonSchema"))
        && let Some(s) = js.get("schema")
    {
        let name = js.get("name").and_then(Value::as_str).unwrap_or(TEXT_NAME);
        let at = pointer(&[
            "outputConfig",
            "textFormat",
            "structure",
            "jsonSchema",
            "schema",
        ]);
        let parsed = match s {
            Value::String(t) => match crate::core::stage::parse::parse_strict(t) {
                Ok(v) => v,
                Err(f) => {
                    let pos = f.at.map(|a| format!(" at {a}")).unwrap_or_default();
                    return Some(Err(SchemaProblem {
                        name: name.to_owned(),
                        pointer: at,
                        message: format!(
                            "is a schema string that is not valid JSON{pos}: {}",
                            f.message
                        ),
                    }));
                }
            },
            other => other.clone(),
        };
        return Some(schema(name, text, false, &parsed, at));
    }
    // Ollama: format is "json" or a JSON Schema object
    if let Some(f @ Value::Object(_)) = body.get("format") {
        return Some(schema(TEXT_NAME, text, false, f, pointer(&["format"])));
    }
    None
}

/// The OpenAPI 3.0 `type` names of a Gemini `Schema` and their JSON Schema names.
const GEMINI_TYPES: [(&str, &str); 7] = [
    ("STRING", "string"),
    ("NUMBER", "number"),
    ("INTEGER", "integer"),
    ("BOOLEAN", "boolean"),
    ("ARRAY", "array"),
    ("OBJECT", "object"),
    ("NULL", "null"),
];

/// The keywords of a Gemini `Schema` whose value is a count (an int64, which proto JSON may
/// write as a string: `"minItems": "1"`), and their JSON Schema names.
const GEMINI_COUNTS: [(&str, &str, &str); 6] = [
    ("minItems", "min_items", "minItems"),
    ("maxItems", "max_items", "maxItems"),
    ("minLength", "min_length", "minLength"),
    ("maxLength", "max_length", "maxLength"),
    ("minProperties", "min_properties", "minProperties"),
    ("maxProperties", "max_properties", "maxProperties"),
];

/// Converts a Gemini `Schema` (`generationConfig.responseSchema`, a function declaration's
/// `parameters`: an OpenAPI 3.0 subset, ai.google.dev/api/caching#Schema) to JSON Schema,
/// keyword by keyword (the table in `docs/requests.md#gemini-responseschema`):
///
/// * `type`: the upper-case names (`STRING`, `NUMBER`, `INTEGER`, `BOOLEAN`, `ARRAY`,
///   `OBJECT`, `NULL`) in lower case, any case accepted; `TYPE_UNSPECIFIED` is dropped;
/// * `nullable: true` adds `"null"` to `type` (and `null` to `enum`); `nullable: false` is dropped;
/// * `format`: kept, except `"enum"` (Gemini's marker of a string enum), dropped;
/// * `enum`, `required`, `pattern`, `minimum`, `maximum`, `title`, `description`,
///   `default`: kept;
/// * `minItems`, `maxItems`, `minLength`, `maxLength`, `minProperties`, `maxProperties`:
///   kept, a numeric string (proto JSON's int64) made a number;
/// * `properties` (each value), `items`, `anyOf` (each branch): converted;
/// * `example` becomes `examples: [example]`; `propertyOrdering` is dropped (it orders
///   generation, it constrains nothing);
/// * snake_case spellings (`any_of`, `min_items`, `property_ordering`) are read as their
///   camelCase keyword; any other keyword is kept as it is.
pub fn openapi_to_json_schema(v: &Value) -> Value {
    let Value::Object(obj) = v else {
        return v.clone();
    };
    let mut out = Map::new();
    let mut nullable = false;
    for (k, val) in obj {
        match k.as_str() {
            "type" => {
                let t = val.as_str().map(|s| {
                    GEMINI_TYPES
                        .iter()
                        .find(|(g, _)| g.eq_ignore_ascii_case(s))
                        .map(|(_, j)| (*j).to_owned())
                });
                match t {
                    Some(Some(j)) => {
                        out.insert("type".into(), Value::String(j));
                    }
                    // TYPE_UNSPECIFIED (or an unknown name): no type constraint
                    Some(None) if val.as_str() == Some("TYPE_UNSPECIFIED") => {}
                    _ => {
                        out.insert("type".into(), val.clone());
                    }
                }
            }
            "nullable" => nullable = val.as_bool() == Some(true),
            "format" if val.as_str() == Some("enum") => {}
            "propertyOrdering" | "property_ordering" => {}
            "example" => {
                out.insert("examples".into(), Value::Array(vec![val.clone()]));
            }
            "properties" => {
                let props = match val {
                    Value::Object(p) => Value::Object(
                        p.iter()
                            .map(|(name, s)| (name.clone(), openapi_to_json_schema(s)))
                            .collect(),
                    ),
                    other => other.clone(),
                };
                out.insert("properties".into(), props);
            }
            "items" => {
                out.insert("items".into(), openapi_to_json_schema(val));
            }
            "anyOf" | "any_of" => {
                let branches = match val {
                    Value::Array(b) => Value::Array(b.iter().map(openapi_to_json_schema).collect()),
                    other => other.clone(),
                };
                out.insert("anyOf".into(), branches);
            }
            _ => {
                if let Some((_, _, json)) = GEMINI_COUNTS
                    .iter()
                    .find(|(c, s, _)| *c == k.as_str() || *s == k.as_str())
                {
                    let n = match val {
                        Value::String(s) => s
                            .trim()
                            .parse::<u64>()
                            .map(Value::from)
                            .unwrap_or_else(|_| val.clone()),
                        other => other.clone(),
                    };
                    out.insert((*json).into(), n);
                } else {
                    out.insert(k.clone(), val.clone());
                }
            }
        }
    }
    if nullable {
        match out.get_mut("type") {
            Some(Value::String(t)) => {
                let t = std::mem::take(t);
                out.insert(
                    "type".into(),
                    Value::Array(vec![Value::String(t), Value::String("null".into())]),
                );
            }
            Some(Value::Array(ts)) if !ts.iter().any(|t| t == "null") => {
                ts.push(Value::String("null".into()));
            }
            _ => {}
        }
        if let Some(Value::Array(e)) = out.get_mut("enum")
            && !e.contains(&Value::Null)
        {
            e.push(Value::Null);
        }
    }
    Value::Object(out)
}

/// How messages name a generation schema: `tool "ticket"` or `text format "ticket"`.
pub fn describe(name: &str, source: SchemaSource) -> String {
    match source {
        SchemaSource::Tool => format!("tool {}", quote(name, 80)),
        SchemaSource::Text => format!("text format {}", quote(name, 80)),
    }
}
